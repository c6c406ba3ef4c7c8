/** The 409 a version check answers: someone saved first; the page now shows their version. */
export function ConflictNotice() {
  return (
    <p className="notice notice-warn" role="alert">
      Someone else changed this skill while you were looking at it. The latest version is loaded; check it and
      try again.
    </p>
  );
}
