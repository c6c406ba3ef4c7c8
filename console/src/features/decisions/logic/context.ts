// What a person is told about a redacted context: what was replaced, by kind
// and count, never the values.

const KIND_WORDS: Record<string, [string, string]> = {
  person: ["name", "names"],
  phone: ["phone number", "phone numbers"],
  email: ["e-mail address", "e-mail addresses"],
  address: ["address", "addresses"],
  vehicle: ["vehicle number", "vehicle numbers"],
  coordinate: ["exact coordinate rounded to its zone", "exact coordinates rounded to their zone"],
};

function counted(kind: string, count: number): string {
  const words = KIND_WORDS[kind];
  if (words) return `${count} ${count === 1 ? words[0] : words[1]}`;
  return `${count} ${kind.replaceAll("_", " ")}`;
}

/** The note under a redacted context: what its placeholders stand for. */
export function redactionNote(redacted: Readonly<Record<string, number>>, erased: boolean): string {
  if (erased) return "The subject's personal data was erased: this decision's context is gone.";
  const kinds = Object.entries(redacted)
    .filter(([, count]) => count > 0)
    .sort(([a], [b]) => a.localeCompare(b));
  if (kinds.length === 0) return "Nothing in it reads as personal data: nothing was replaced.";
  return `Replaced: ${kinds.map(([kind, count]) => counted(kind, count)).join(", ")}.`;
}
