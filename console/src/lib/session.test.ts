import { describe, expect, it } from "vitest";
import { accessProblem, canWrite, readClaims, roleLabel, tokenFromFragment, tokenProblem } from "./session";

function jwt(claims: Record<string, unknown>): string {
  // As a JWT library does: UTF-8 bytes, then base64url.
  const encode = (value: object) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode(claims)}.signature`;
}

const admin = { sub: "dev", email: "dev@outrider.local", role: 1, tenant_id: 0, exp: 2_000 };

describe("tokenFromFragment", () => {
  it("reads the token from the fragment, never anything else", () => {
    expect(tokenFromFragment("#token=abc.def.ghi")).toBe("abc.def.ghi");
    expect(tokenFromFragment("#other=1&token=x.y.z")).toBe("x.y.z");
    expect(tokenFromFragment("")).toBeNull();
    expect(tokenFromFragment("#token=")).toBeNull();
  });
});

describe("readClaims", () => {
  it("decodes the payload of our tokens", () => {
    expect(readClaims(jwt(admin))).toEqual(admin);
  });
  it("refuses what is not a console token", () => {
    expect(readClaims("not-a-jwt")).toBeNull();
    expect(readClaims(jwt({ sub: "x", exp: 5 }))).toBeNull();
    expect(readClaims("a.%%%.c")).toBeNull();
  });
  it("keeps non-ASCII emails intact", () => {
    expect(readClaims(jwt({ ...admin, email: "zoë@example.com" }))?.email).toBe("zoë@example.com");
  });
});

describe("tokenProblem", () => {
  it("says when a token has expired", () => {
    expect(tokenProblem(jwt(admin), 1_999)).toBeNull();
    expect(tokenProblem(jwt(admin), 2_000)).toMatch(/expired/);
    expect(tokenProblem("garbage", 0)).toMatch(/not a console token/);
  });
});

describe("canWrite", () => {
  it("is role 1 platform staff only", () => {
    expect(canWrite(admin)).toBe(true);
    expect(canWrite({ ...admin, role: 3 })).toBe(false);
    expect(canWrite({ ...admin, tenant_id: 7 })).toBe(false);
    expect(canWrite(null)).toBe(false);
    expect(roleLabel({ ...admin, role: 4 })).toBe("role 4 · read-only");
  });
});

describe("accessProblem", () => {
  it("lets staff roles 1, 3 and 4 of tenant 0 in", () => {
    for (const role of [1, 3, 4]) expect(accessProblem({ ...admin, role })).toBeNull();
  });
  it("names the tenant of a tenant sign-in, whatever its role", () => {
    for (const role of [1, 2, 3, 4, 9]) expect(accessProblem({ ...admin, role, tenant_id: 17 })).toMatch(/tenant 17/);
  });
  it("names a staff role that may not read", () => {
    for (const role of [0, 2, 5, 9]) expect(accessProblem({ ...admin, role })).toMatch(new RegExp(`Role ${role} `));
  });
});
