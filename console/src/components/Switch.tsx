/**
 * A labelled on/off switch; the label names what it switches. While a change
 * is being saved it is busy, not disabled: a disabled button drops keyboard
 * focus, and the operator would lose their place on the page.
 */
export function Switch({
  checked,
  label,
  onChange,
  disabled = false,
  busy = false,
  id,
  describedBy,
}: {
  checked: boolean;
  label: string;
  onChange: (next: boolean) => void;
  disabled?: boolean;
  busy?: boolean;
  id?: string;
  describedBy?: string;
}) {
  return (
    <button
      id={id}
      type="button"
      role="switch"
      aria-checked={checked}
      aria-label={label}
      aria-describedby={describedBy}
      className={`switch ${checked ? "switch-on" : "switch-off"}`}
      disabled={disabled}
      aria-busy={busy || undefined}
      onClick={() => {
        if (!busy) onChange(!checked);
      }}
    >
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
      <span className="switch-text">{checked ? "On" : "Off"}</span>
    </button>
  );
}
