import { QueryClientProvider } from "@tanstack/react-query";
import { useEffect, useState, type ReactNode } from "react";
import { Empty, Loading } from "../components/States";
import { matchRoute, navigate, useLocation } from "../lib/router";
import { AlertsPage } from "../features/alerts/components/AlertsPage";
import { AgentsPage } from "../features/agents/components/AgentsPage";
import { NewSkillPage } from "../features/agents/components/NewSkillPage";
import { AuditPage } from "../features/audit/components/AuditPage";
import { DecisionPage } from "../features/decisions/components/DecisionPage";
import { DecisionsPage } from "../features/decisions/components/DecisionsPage";
import { HumanDecisionsPage } from "../features/humans/components/HumanDecisionsPage";
import { InsightsPage } from "../features/insights/components/InsightsPage";
import { PlaygroundPage } from "../features/playground/components/PlaygroundPage";
import { RunPage } from "../features/playground/components/RunPage";
import { RolloutPage } from "../features/rollouts/components/RolloutPage";
import { RolloutsPage } from "../features/rollouts/components/RolloutsPage";
import { RoutingPage } from "../features/routing/components/RoutingPage";
// In the one bundle, like every page: as separate chunks (4 KB gzipped) the run pages
// cost a round trip and React's reveal of a suspended page (about 300 ms) before their
// first read could even start.
import { RunsPage } from "../features/runs/components/RunsPage";
import { TaskRunPage } from "../features/runs/components/TaskRunPage";
import { Layout } from "./Layout";
import { makeQueryClient } from "./queryClient";
import { SessionProvider, useSession } from "../lib/SessionContext";
import { NoAccess } from "./NoAccess";
import { SignIn } from "./SignIn";
import { accessProblem } from "../lib/session";


type Route = { pattern: string; title: string; render: (params: Record<string, string>) => ReactNode };

const ROUTES: Route[] = [
  { pattern: "/agents", title: "Agents", render: () => <AgentsPage /> },
  { pattern: "/agents/:id", title: "Agent Studio", render: (p) => <AgentsPage agentId={p.id} /> },
  { pattern: "/agents/:id/skills/new", title: "New skill", render: (p) => <NewSkillPage agentId={p.id ?? ""} /> },
  { pattern: "/decisions", title: "Decisions", render: () => <DecisionsPage /> },
  { pattern: "/decisions/:id", title: "Decision", render: (p) => <DecisionPage decisionId={p.id ?? ""} /> },
  { pattern: "/subjects/:id", title: "Human decisions", render: (p) => <HumanDecisionsPage subjectId={p.id ?? ""} /> },
  { pattern: "/insights", title: "Insights", render: () => <InsightsPage /> },
  { pattern: "/runs", title: "Runs", render: () => <RunsPage /> },
  { pattern: "/runs/:agent/:task", title: "Run", render: (p) => <TaskRunPage agentId={p.agent ?? ""} taskId={p.task ?? ""} /> },
  { pattern: "/routing", title: "Routing", render: () => <RoutingPage /> },
  { pattern: "/rollouts", title: "Rollouts", render: () => <RolloutsPage /> },
  { pattern: "/rollouts/:id", title: "Rollout", render: (p) => <RolloutPage rolloutId={p.id ?? ""} /> },
  { pattern: "/alerts", title: "Alerts", render: () => <AlertsPage /> },
  { pattern: "/playground", title: "Playground", render: () => <PlaygroundPage /> },
  { pattern: "/playground/runs/:id", title: "Playground run", render: (p) => <RunPage runId={p.id ?? ""} /> },
  { pattern: "/audit", title: "Audit", render: () => <AuditPage /> },
];

function Routes() {
  const { path } = useLocation();
  const found = ROUTES.map((route) => ({ route, params: matchRoute(route.pattern, path) })).find((m) => m.params !== null);
  const title = found ? found.route.title : "Not found";
  useEffect(() => {
    if (path === "/") navigate("/agents", { replace: true });
    document.title = `${title} · Outrider`;
  }, [path, title]);
  if (found && found.params) return found.route.render(found.params);
  return path === "/" ? null : <Empty>There is no console page at {path}.</Empty>;
}

function Console() {
  const { token, claims, pending } = useSession();
  const [client] = useState(makeQueryClient);
  // Signing out drops every cached answer: the next operator must not see them.
  useEffect(() => {
    if (token === null) client.clear();
  }, [token, client]);
  if (pending) return <Loading what="your session" />;
  if (token === null) return <SignIn />;
  const problem = claims ? accessProblem(claims) : null;
  if (problem) return <NoAccess reason={problem} />;
  return (
    <QueryClientProvider client={client}>
      <Layout>
        <Routes />
      </Layout>
    </QueryClientProvider>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Console />
    </SessionProvider>
  );
}
