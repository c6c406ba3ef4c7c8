import { useSession } from "../lib/SessionContext";

/** The one screen a sign-in that may read no page gets, in place of every page's 403. */
export function NoAccess({ reason }: { reason: string }) {
  const { claims, signOut } = useSession();
  return (
    <main id="content" className="signin">
      <h1>No access to the Outrider console</h1>
      <div className="notice notice-warn" role="status">
        <p>{reason}</p>
      </div>
      <p>
        Signed in as <strong>{claims?.email || claims?.sub}</strong>. A platform operator can mint a staff link with{" "}
        <code>outrider token --console --role 1</code> (admin) or <code>--role 3</code> (read-only).
      </p>
      <button type="button" className="button" onClick={() => signOut()}>
        Sign out
      </button>
    </main>
  );
}
