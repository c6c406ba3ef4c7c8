// A link opened in a new tab keeps the session. The token stays in each tab's
// session storage, never in local storage: a token in local storage would
// outlive every console tab and sit on disk for whoever opens the browser
// next. Instead a tab that starts without one asks the open console tabs over
// a BroadcastChannel (same origin only) and takes the token one of them
// answers with; so the session lives exactly as long as some console tab
// holds it. Signing out in one tab signs out every tab.

export const HANDOVER_CHANNEL = "outrider.console.session";
/** How long a new tab waits for an open tab to answer before showing sign-in. */
export const HANDOVER_WAIT_MS = 400;

export type HandoverMessage = { kind: "ask" } | { kind: "token"; token: string } | { kind: "signed-out" };

function isMessage(data: unknown): data is HandoverMessage {
  if (typeof data !== "object" || data === null) return false;
  const kind = (data as { kind?: unknown }).kind;
  if (kind === "token") return typeof (data as { token?: unknown }).token === "string";
  return kind === "ask" || kind === "signed-out";
}

function channel(): BroadcastChannel | null {
  return typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel(HANDOVER_CHANNEL);
}

/** The token an open console tab answers with within `waitMs`, or null when none does. */
export function askOpenTabs(waitMs = HANDOVER_WAIT_MS): Promise<string | null> {
  const open = channel();
  if (open === null) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = (token: string | null) => {
      clearTimeout(timer);
      open.close();
      resolve(token);
    };
    const timer = setTimeout(() => done(null), waitMs);
    open.onmessage = (event: MessageEvent) => {
      if (isMessage(event.data) && event.data.kind === "token") done(event.data.token);
    };
    open.postMessage({ kind: "ask" } satisfies HandoverMessage);
  });
}

export type Serving = {
  stop: () => void;
  /** Tell every other tab this session is over; sent on the serving channel, which never hears itself. */
  signOutEverywhere: () => void;
};

/** Answer other tabs' asks with this tab's token while it has one; hear another tab's sign-out. */
export function serveOpenTabs(token: () => string | null, signedOutElsewhere: () => void): Serving {
  const open = channel();
  if (open === null) return { stop: () => undefined, signOutEverywhere: () => undefined };
  open.onmessage = (event: MessageEvent) => {
    if (!isMessage(event.data)) return;
    if (event.data.kind === "ask") {
      const held = token();
      if (held !== null) open.postMessage({ kind: "token", token: held } satisfies HandoverMessage);
    } else if (event.data.kind === "signed-out") {
      signedOutElsewhere();
    }
  };
  return {
    stop: () => open.close(),
    signOutEverywhere: () => open.postMessage({ kind: "signed-out" } satisfies HandoverMessage),
  };
}
