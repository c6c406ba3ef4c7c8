// The gateway's JSON shapes exist once, in the generated schema.d.ts. A type
// written out by hand with an API shape's fields (an object type, or a union
// of its string values) is a second copy that stays behind when the server
// changes: this test finds such copies anywhere in src/, and the fix is to
// name the generated type (resources.ts) or derive from it (Pick, Omit).
import ts from "typescript";
import { describe, expect, it } from "vitest";
import schemaSource from "./schema.d.ts?raw";

const sources = import.meta.glob<string>(["../**/*.ts", "../**/*.tsx", "!./schema.d.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

// Fewer fields than this, inside a larger schema, are too common to be a
// copy: { entity, id } is an audit row's pair and a component's props too.
const FEWEST_SHARED_FIELDS = 3;
// A whole shape of one field ({ status }) is every other component's props.
const FEWEST_WHOLE_FIELDS = 2;

/** Where a shape is declared (a schema, or a route's operation) and its field names or string values. */
type Shape = { schema: string; fields: Set<string> };

function parse(path: string, text: string): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => {
    walk(child, visit);
  });
}

function nameOf(name: ts.PropertyName): string {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : name.getText();
}

/** The properties of an interface, or of an object type (none for any other type). */
function properties(node: ts.Node | undefined): ts.PropertySignature[] {
  const members: readonly ts.TypeElement[] =
    node && (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) ? node.members : [];
  return members.filter(ts.isPropertySignature);
}

/** The property names an object type or interface declares, or null for any other type. */
function fieldsOf(node: ts.Node): Set<string> | null {
  if (!ts.isTypeLiteralNode(node) && !ts.isInterfaceDeclaration(node)) return null;
  return new Set(properties(node).map((member) => nameOf(member.name)));
}

/** The values of a union of string literals ("a" | "b"), or null for any other type. */
function valuesOf(node: ts.Node): Set<string> | null {
  if (!ts.isUnionTypeNode(node)) return null;
  const values = node.types.map((type) =>
    ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal) ? type.literal.text : null,
  );
  return values.every((value) => value !== null) && values.length > 1 ? new Set(values) : null;
}

/**
 * Every object shape and every string union of components["schemas"], and
 * the string unions of the routes' parameters (a query's `entity`, say).
 */
function schemaShapes(): { objects: Shape[]; unions: Shape[] } {
  const objects: Shape[] = [];
  const unions: Shape[] = [];
  const collect = (entry: ts.PropertySignature, withObjects: boolean) => {
    const schema = nameOf(entry.name);
    walk(entry, (part) => {
      const fields = withObjects ? fieldsOf(part) : null;
      if (fields && fields.size > 0) objects.push({ schema, fields });
      const values = valuesOf(part);
      if (values) unions.push({ schema, fields: values });
    });
  };
  walk(parse("schema.d.ts", schemaSource), (node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    if (node.name.text === "components") {
      const schemas = properties(node).find((member) => nameOf(member.name) === "schemas");
      for (const entry of properties(schemas?.type)) collect(entry, true);
    }
    if (node.name.text === "operations") for (const entry of properties(node)) collect(entry, false);
  });
  return { objects, unions };
}

/** A declared set is a copy when it is a whole shape, or enough of one to be no accident. */
function copies(declared: Set<string>, shapes: Shape[]): string | null {
  const found = shapes.find(
    ({ fields }) =>
      [...declared].every((name) => fields.has(name)) &&
      (declared.size >= FEWEST_SHARED_FIELDS || (declared.size === fields.size && declared.size >= FEWEST_WHOLE_FIELDS)),
  );
  return found ? found.schema : null;
}

/** Where `source` spells out part of a schema by hand, as "file:line Schema". */
function handCopies(path: string, source: string, shapes: { objects: Shape[]; unions: Shape[] }): string[] {
  const file = parse(path, source);
  const found: string[] = [];
  walk(file, (node) => {
    const fields = fieldsOf(node);
    const values = valuesOf(node);
    const schema = fields ? copies(fields, shapes.objects) : values ? copies(values, shapes.unions) : null;
    if (schema) found.push(`${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${schema}`);
  });
  return found;
}

describe("the API's shapes", () => {
  const shapes = schemaShapes();

  it("are read from the generated schema", () => {
    expect(shapes.objects.map((shape) => shape.schema)).toContain("Agent");
    expect(shapes.unions.map((shape) => shape.schema)).toContain("AgentStatus");
    expect(Object.keys(sources)).toEqual(expect.arrayContaining(["./client.ts", "../features/agents/api/queries.ts"]));
  });

  it("are never declared again by hand", () => {
    const found = Object.entries(sources).flatMap(([path, source]) => handCopies(path, source, shapes));
    expect(found).toEqual([]);
  });

  it("would be found if they were", () => {
    const copy = `type Mine = { id: string; name: string; runtime: "engine" | "console"; purpose: string };
      function pick(outcome: "success" | "failure" | "unknown") { return outcome; }
      type Audited = "skill" | "agent" | "subject";`;
    expect(handCopies("copy.ts", copy, shapes)).toEqual([
      "copy.ts:1 Agent",
      "copy.ts:1 Runtime",
      "copy.ts:2 Decision",
      "copy.ts:3 list_audit_admin_ai_audit_get",
    ]);
  });
});
