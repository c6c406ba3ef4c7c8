// A small router over the History API: the console has a dozen routes and
// needs nothing a routing library adds beyond this, so the bundle stays small.
import { createElement, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

export const BASE = "/console";
const CHANGE = "outrider:navigate";

/** Named params of `pattern` (":name" segments) in `path`, or null when it does not match. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("/").filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i += 1) {
    const segment = want[i] as string;
    const actual = have[i] as string;
    if (segment.startsWith(":")) {
      try {
        params[segment.slice(1)] = decodeURIComponent(actual);
      } catch {
        return null;
      }
    } else if (segment !== actual) {
      return null;
    }
  }
  return params;
}

/** The console path of a browser pathname ("/console/agents" → "/agents"). */
export function consolePath(pathname: string): string {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return rest === "" ? "/" : rest;
}

function subscribe(notify: () => void): () => void {
  window.addEventListener("popstate", notify);
  window.addEventListener(CHANGE, notify);
  return () => {
    window.removeEventListener("popstate", notify);
    window.removeEventListener(CHANGE, notify);
  };
}

export type Location = { path: string; search: string };

let last: Location = { path: "/", search: "" };
function snapshot(): Location {
  const path = consolePath(window.location.pathname);
  const search = window.location.search;
  if (path !== last.path || search !== last.search) last = { path, search };
  return last;
}

export function useLocation(): Location {
  return useSyncExternalStore(subscribe, snapshot);
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = BASE + to;
  if (options.replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current query parameters, and a setter that replaces them in the URL. */
export function useSearch(): [URLSearchParams, (next: Record<string, string>) => void] {
  const { path, search } = useLocation();
  const params = new URLSearchParams(search);
  const update = (next: Record<string, string>) => {
    const merged = new URLSearchParams();
    for (const [key, value] of Object.entries(next)) if (value) merged.set(key, value);
    const text = merged.toString();
    navigate(`${path}${text ? `?${text}` : ""}`, { replace: true });
  };
  return [params, update];
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** An ordinary link (so open-in-new-tab works) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return createElement("a", { ...rest, href: BASE + to, onClick: handle });
}
