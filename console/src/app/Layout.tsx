import type { ReactNode } from "react";
import { ZoneControl } from "../components/ZoneControl";
import { AlertsBadge } from "../features/alerts/components/AlertsBadge";
import { Link, useLocation } from "../lib/router";
import { roleLabel } from "../lib/session";
import { useSearchShortcut } from "../lib/shortcuts";
import { useSession } from "../lib/SessionContext";

const SECTIONS = [
  { to: "/agents", label: "Agents" },
  { to: "/decisions", label: "Decisions" },
  { to: "/insights", label: "Insights" },
  { to: "/runs", label: "Runs" },
  { to: "/routing", label: "Routing" },
  { to: "/rollouts", label: "Rollouts" },
  { to: "/alerts", label: "Alerts" },
  { to: "/playground", label: "Playground" },
  { to: "/audit", label: "Audit" },
];

/** The section a page belongs to: a subject's human decisions are read from a decision. */
export function sectionOf(path: string): string | undefined {
  if (path.startsWith("/subjects/")) return "/decisions";
  return SECTIONS.find((section) => path === section.to || path.startsWith(`${section.to}/`))?.to;
}

export function Layout({ children }: { children: ReactNode }) {
  const { claims, signOut } = useSession();
  const { path } = useLocation();
  useSearchShortcut();
  return (
    <>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/agents" className="brand">
          Outrider
        </Link>
        <nav aria-label="Console sections">
          <ul>
            {SECTIONS.map((section) => (
              <li key={section.to}>
                <Link to={section.to} aria-current={sectionOf(path) === section.to ? "page" : undefined}>
                  {section.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <AlertsBadge />
        <ZoneControl />
        {claims ? (
          <div className="who">
            <span className="shortcut-hint" title="Press / to search">
              <kbd>/</kbd> search
            </span>
            <span>{claims.email || claims.sub}</span>
            <span className="who-role">{roleLabel(claims)}</span>
            <button type="button" className="button button-quiet" onClick={() => signOut()}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
