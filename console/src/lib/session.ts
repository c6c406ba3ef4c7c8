// The console's sign-in: a JWT handed over in the URL fragment (a dev link or
// the host platform's sign-in redirect) or pasted, kept in session storage.
// The claims are read here only to shape the page (who is signed in, whether
// to draw write controls); the gateway verifies the token on every call.

export type Claims = { sub: string; email: string; role: number; tenant_id: number; exp: number };

export const TOKEN_KEY = "outrider.console.token";
export const WRITER_ROLE = 1;
// The roles the gateway lets read the console (its STAFF_ROLES).
export const READER_ROLES: readonly number[] = [1, 3, 4];

/** The token a `#token=…` fragment carries, or null. */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const token = params.get("token")?.trim();
  return token ? token : null;
}

function base64UrlDecode(part: string): string {
  const padded = part.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (part.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The claims of a JWT, without verifying it; null when it is not a JWT of ours. */
export function readClaims(token: string): Claims | null {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[1]) return null;
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(base64UrlDecode(parts[1])) as Record<string, unknown>;
  } catch {
    return null;
  }
  const { sub, email, role, tenant_id: tenant, exp } = payload;
  if (typeof role !== "number" || typeof tenant !== "number" || typeof exp !== "number" || sub === undefined) {
    return null;
  }
  return { sub: typeof sub === "string" ? sub : JSON.stringify(sub), email: typeof email === "string" ? email : "", role, tenant_id: tenant, exp };
}

/** Why a token cannot be used, in words for the sign-in page; null when it can. */
export function tokenProblem(token: string, nowSeconds: number): string | null {
  const claims = readClaims(token);
  if (claims === null) return "That is not a console token (a JWT with role, tenant_id and exp).";
  if (claims.exp <= nowSeconds) return "Your sign-in has expired. Get a fresh link and sign in again.";
  return null;
}

/**
 * Why this sign-in can read no console page, in words; null when it can read
 * them. The gateway would refuse every page with a 403, and a screen of
 * stacked refusals tells the person less than one sentence does.
 */
export function accessProblem(claims: Claims): string | null {
  if (claims.tenant_id !== 0) {
    return `You are signed in for tenant ${claims.tenant_id}. The console is for platform staff (tenant 0); tenants see their agents through the host platform.`;
  }
  if (!READER_ROLES.includes(claims.role)) {
    return `Role ${claims.role} may not read the console: it needs role 1 (admin), 3 or 4 (read-only).`;
  }
  return null;
}

/** Write controls are drawn only for role 1 platform staff; the gateway refuses everyone else anyway. */
export function canWrite(claims: Claims | null): boolean {
  return claims !== null && claims.role === WRITER_ROLE && claims.tenant_id === 0;
}

export function roleLabel(claims: Claims): string {
  if (claims.tenant_id !== 0) return `tenant ${claims.tenant_id}`;
  return claims.role === WRITER_ROLE ? "admin" : `role ${claims.role} · read-only`;
}
