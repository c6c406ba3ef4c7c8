import { auditDiff } from "../lib/diff";

/** One audit row's change: only the keys whose value differs, before → after. */
export function ChangeDiff({ field, before, after }: { field: string; before: unknown; after: unknown }) {
  const lines = auditDiff(field, before, after);
  if (lines.length === 0) return <span className="hint">{field}: no value changed</span>;
  return (
    <ul className="diff">
      {lines.map((line) => (
        <li key={line.key}>
          <code>{line.key}</code> <del>{line.before}</del> → <ins>{line.after}</ins>
        </li>
      ))}
    </ul>
  );
}
