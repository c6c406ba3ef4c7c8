// Names for the gateway's JSON shapes (DESIGN.md §4) that the console refers
// to by name. Each is the generated OpenAPI type itself (schema.d.ts, rebuilt
// from the gateway by `make console`), never a copy: a field the server
// renames fails the type check wherever the console reads it. shapes.test.ts
// fails when a shape is written out by hand again.
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type AuditQuery = NonNullable<paths["/admin/ai/audit"]["get"]["parameters"]["query"]>;
type DecisionExportQuery = NonNullable<paths["/admin/ai/decisions/export"]["get"]["parameters"]["query"]>;

/** What the audit log is filtered to: the changes of agents, or of skills. */
export type AuditEntity = NonNullable<AuditQuery["entity"]>;

/** The file formats the decision export writes. */
export type ExportFormat = NonNullable<DecisionExportQuery["format"]>;

export type Agent = Schemas["Agent"];
export type Alert = Schemas["Alert"];
export type AutonomyEvidence = Schemas["AutonomyEvidence"];
export type AgentPatch = Schemas["AgentPatch"];
export type DecisionCount = Schemas["DecisionCount"];
export type ErrorBody = Schemas["ErrorBody"];
export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type Insights = Schemas["Insights"];
export type ModelArm = Schemas["ModelArm"];
export type ModelCall = Schemas["ModelCall"];
export type OutcomeBucket = Schemas["OutcomeBucket"];
export type OutcomeIn = Schemas["OutcomeIn"];
export type Rollout = Schemas["Rollout"];
export type RolloutDraft = Schemas["RolloutDraft"];
export type RolloutEvent = Schemas["RolloutEvent"];
export type RolloutState = Schemas["RolloutState"];
export type ArmEvidence = Schemas["ArmEvidence"];
export type RunTrace = Schemas["RunTrace"];
export type SeriesPoint = Schemas["SeriesPoint"];
export type AgentSeries = Schemas["AgentSeries"];
export type RunSeries = Schemas["RunSeries"];
export type UsagePoint = Schemas["UsagePoint"];
export type UsageSeries = Schemas["UsageSeries"];
export type Skill = Schemas["Skill"];
export type SkillDraft = Schemas["SkillDraft"];
export type SkillPatch = Schemas["SkillPatch"];
export type TaskRun = Schemas["TaskRun"];
export type TaskRunDetail = Schemas["TaskRunDetail"];
export type ThresholdSpec = Schemas["ThresholdSpec"];
export type Tool = Schemas["Tool"];
export type TraceStep = Schemas["TraceStep"];
