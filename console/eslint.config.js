// The console's shape, checked: typescript-eslint's strict type-aware rules,
// no import circle, and the layers below, each allowed to import only what
// sits under it. `npm run lint` runs this and `tsc --noEmit`.
import { readdirSync } from "node:fs";
import comments from "@eslint-community/eslint-plugin-eslint-comments/configs";
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

const FEATURES = readdirSync(`${import.meta.dirname}/src/features`);

// Each folder of src/ and what it may import besides itself: api/ talks to the
// gateway, lib/ holds the console's plumbing, components/ its shared widgets,
// a feature is one family of pages. Features never import each other, so each
// can change or go without touching the rest; only app/ composes them.
const LAYERS = [
  { target: "./src/api", allowed: [] },
  { target: "./src/lib", allowed: ["./api"] },
  { target: "./src/components", allowed: ["./api", "./lib"] },
  ...FEATURES.map((feature) => ({ target: `./src/features/${feature}`, allowed: ["./api", "./lib", "./components"] })),
];

export default defineConfig(
  globalIgnores(["node_modules/", "src/api/schema.d.ts"]),
  {
    files: ["eslint.config.js"],
    extends: [js.configs.recommended],
  },
  {
    files: ["**/*.{ts,tsx}"],
    extends: [
      js.configs.recommended,
      tseslint.configs.strictTypeChecked,
      comments.recommended,
    ],
    plugins: { "import-x": importX },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    settings: {
      "import-x/extensions": [".ts", ".tsx", ".js"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".tsx", ".js"] })],
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // A suppression says why on its own line: `-- reason` after the rule.
      "@eslint-community/eslint-comments/require-description": "error",
      // An event handler written `() => setOpen(false)` returns the setter's
      // void; braces around every such handler would say nothing more.
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      // Counts and ids are written into labels; the rule is kept for what
      // would print as "[object Object]", "undefined" or "null".
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      // `const { [key]: _, ...rest } = fields` is how a key is left out.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
      // Of the import rules, only those about the shape: tsc already refuses
      // a name that a module does not export.
      "import-x/no-duplicates": "error",
      "import-x/no-self-import": "error",
      "import-x/no-useless-path-segments": "error",
      // A circle among the packages is not ours to break, and following one
      // means parsing the packages.
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: LAYERS.map(({ target, allowed }) => ({
            target,
            from: "./src",
            except: [target.replace("./src", "."), ...allowed],
            message: `${target.slice(2)}/ imports only itself${allowed.map((folder) => `, src/${folder.slice(2)}/`).join("")}`,
          })),
        },
      ],
    },
  },
);
