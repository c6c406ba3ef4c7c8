import { describe, expect, it } from "vitest";
import { ApiError, failure } from "../api/client";
import { errorTitle, operatorMessage, requestIdOf, retryable } from "./errors";

describe("operatorMessage", () => {
  it("names fields by the labels on the page, never their API names", () => {
    const refused = new ApiError(422, "INVALID_FIELD", "decided_to: must be later than decided_from", {
      fields: { decided_to: "must be later than decided_from" },
    });
    expect(operatorMessage(refused)).toBe("“Decided before” must be later than “Decided from”.");
  });
  it("says what a value is not instead of showing a regex", () => {
    const refused = new ApiError(422, "INVALID_ARGUMENT", "invalid cursor: String should match pattern '^[A-Za-z0-9_=-]*$'", {
      fields: { cursor: "String should match pattern '^[A-Za-z0-9_=-]*$'" },
    });
    expect(operatorMessage(refused)).toBe("The page link is not in the form it takes.");
  });
  it("keeps the gateway's own sentence where it is already in words", () => {
    expect(operatorMessage(new ApiError(403, "STAFF_ONLY", "the console is for staff; tenant logins cannot use it"))).toBe(
      "the console is for staff; tenant logins cannot use it",
    );
    expect(operatorMessage(new ApiError(404, "DECISION_NOT_FOUND", "no decision has decision_id 7"))).toBe(
      "no decision has the decision id 7",
    );
    expect(operatorMessage(new ApiError(0, "NETWORK", "the gateway could not be reached"))).toMatch(/^The gateway could not be reached/);
  });
});

describe("retryable", () => {
  it("offers another try only where one can succeed", () => {
    expect([0, 500, 503, 429].map((status) => retryable(new ApiError(status, "X", "x")))).toEqual([true, true, true, true]);
    expect([400, 403, 404, 409, 422].map((status) => retryable(new ApiError(status, "X", "x")))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
  it("titles each kind of failure", () => {
    expect(errorTitle(new ApiError(404, "DECISION_NOT_FOUND", "x"))).toBe("Not found");
    expect(errorTitle(new ApiError(403, "FORBIDDEN", "x"))).toBe("Not allowed");
  });
});

describe("requestIdOf", () => {
  const envelope = (status: number, details: Record<string, unknown>, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ error: { code: "INTERNAL", message: "internal error", details } }), {
      status,
      headers: { "Content-Type": "application/json", ...headers },
    });

  it("quotes the id a 5xx's envelope carries", async () => {
    expect(requestIdOf(await failure(envelope(500, { request_id: "req-7f3a" })))).toBe("req-7f3a");
  });
  it("takes the header's id where the body is not the gateway's envelope", async () => {
    const page = new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway", headers: { "X-Request-Id": "req-proxy" } });
    expect(requestIdOf(await failure(page))).toBe("req-proxy");
    expect(requestIdOf(await failure(envelope(503, {}, { "X-Request-Id": "req-header" })))).toBe("req-header");
  });
  it("quotes none below 500, where the ask and not the platform is at fault, and none where there is none", async () => {
    expect(requestIdOf(await failure(envelope(422, { request_id: "req-1" })))).toBeNull();
    expect(requestIdOf(await failure(envelope(500, {})))).toBeNull();
    expect(requestIdOf(new ApiError(0, "NETWORK", "the gateway could not be reached"))).toBeNull();
    expect(requestIdOf(new Error("boom"))).toBeNull();
  });
});
