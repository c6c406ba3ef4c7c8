import { useEffect } from "react";
import { navigate } from "./router";

// The page's own search field says so with this attribute; pages without one
// send "/" to the decisions list, which is where an operator looks a subject up.
const SEARCH_FIELD = "[data-page-search]";
const SEARCH_PAGE = "/decisions";
// Frames to wait for the decisions page to draw its search field after navigating.
const FRAMES_TO_WAIT = 30;

type KeyPress = { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; target: EventTarget | null };

/** Whether a key press asks for search: a bare "/" typed anywhere but into a field. */
export function isSearchShortcut(press: KeyPress): boolean {
  if (press.key !== "/" || press.ctrlKey || press.metaKey || press.altKey) return false;
  const target = press.target as { tagName?: string; isContentEditable?: boolean } | null;
  if (!target) return true;
  return !target.isContentEditable && !["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName ?? "");
}

function focusSearch(framesLeft: number): void {
  const field = document.querySelector<HTMLInputElement>(SEARCH_FIELD);
  if (field) {
    field.focus();
    field.select();
  } else if (framesLeft > 0) {
    requestAnimationFrame(() => focusSearch(framesLeft - 1));
  }
}

/** "/" focuses the page's search field, as it does on GitHub and in Grafana. */
export function useSearchShortcut(): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isSearchShortcut(event)) return;
      event.preventDefault();
      if (!document.querySelector(SEARCH_FIELD)) navigate(SEARCH_PAGE);
      focusSearch(FRAMES_TO_WAIT);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
