import { useState, type SubmitEvent } from "react";
import { ApiError, fieldProblems } from "../../../api/client";
import type { Tool } from "../../../api/resources";
import { PageHeader } from "../../../components/PageHeader";
import { useCanWrite } from "../../../lib/SessionContext";
import { KindBadge } from "../../../components/Badges";
import { ErrorNotice, QueryView } from "../../../components/States";
import { Link, navigate } from "../../../lib/router";
import { draftProblems, emptyDraft, type SkillForm } from "../logic/newSkill";
import { useAgent, useCreateSkill } from "../api/queries";

/**
 * A new skill is put together from tools that already exist on a console
 * agent: a tool with no implementation behind it would be a lie on screen.
 */
export function NewSkillPage({ agentId }: { agentId: string }) {
  const agent = useAgent(agentId);
  const canWrite = useCanWrite();
  return (
    <>
      <PageHeader title="New skill">
        <Link to={`/agents/${encodeURIComponent(agentId)}`}>Back to {agentId}</Link>
      </PageHeader>
      <QueryView query={agent} what={`agent ${agentId}`}>
        {(detail) =>
          !canWrite ? (
            <p className="notice notice-error" role="alert">Only role 1 may add skills.</p>
          ) : detail.runtime !== "console" ? (
            <p className="notice notice-warn" role="alert">
              {detail.id} runs in the engine, which only runs the skills its code implements. New skills go on console
              agents.
            </p>
          ) : (
            <NewSkillForm agentId={detail.id} tools={detail.tools} />
          )
        }
      </QueryView>
    </>
  );
}

function NewSkillForm({ agentId, tools }: { agentId: string; tools: Tool[] }) {
  const create = useCreateSkill(agentId);
  const [draft, setDraft] = useState<SkillForm>(() => emptyDraft(agentId));
  const [touched, setTouched] = useState(false);
  const local = draftProblems(draft);
  const server = create.error instanceof ApiError && create.error.status === 422 ? fieldProblems(create.error.details) : {};
  const problem = (field: string): string | undefined => server[field] ?? (touched ? local[field] : undefined);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setTouched(true);
    if (Object.keys(local).length > 0) return;
    create.mutate(draft, { onSuccess: () => navigate(`/agents/${encodeURIComponent(agentId)}`) });
  };

  const text = (field: "id" | "title" | "category" | "description" | "sample_prompt", label: string, multiline = false) => {
    const id = `new-skill-${field}`;
    const error = problem(field);
    const props = {
      id,
      value: draft[field],
      "aria-invalid": error ? true : undefined,
      "aria-describedby": error ? `${id}-problem` : undefined,
      onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [field]: event.target.value }),
    };
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        {multiline ? <textarea rows={3} {...props} /> : <input {...props} autoComplete="off" />}
        {error ? (
          <p id={`${id}-problem`} className="field-error">
            {error}
          </p>
        ) : null}
      </div>
    );
  };

  return (
    <form className="form panel" onSubmit={submit} noValidate>
      {text("id", "Skill id (lowercase_snake_case)")}
      {text("title", "Title")}
      {text("category", "Category")}
      {text("description", "Description", true)}
      {text("sample_prompt", "Sample prompt", true)}
      <fieldset>
        <legend>Tools of {agentId}</legend>
        {tools.map((tool) => (
          <div key={tool.name} className="check">
            <input
              type="checkbox"
              id={`tool-${tool.name}`}
              checked={draft.tool_names.includes(tool.name)}
              onChange={(event) =>
                setDraft({
                  ...draft,
                  tool_names: event.target.checked
                    ? [...draft.tool_names, tool.name]
                    : draft.tool_names.filter((name) => name !== tool.name),
                })
              }
            />
            <label htmlFor={`tool-${tool.name}`}>
              <code>{tool.name}</code> <KindBadge kind={tool.kind} /> <span className="hint">{tool.description}</span>
            </label>
          </div>
        ))}
        {problem("tool_names") ? <p className="field-error">{problem("tool_names")}</p> : null}
      </fieldset>
      <div className="check">
        <input
          type="checkbox"
          id="new-skill-enabled"
          checked={draft.enabled}
          onChange={(event) => setDraft({ ...draft, enabled: event.target.checked })}
        />
        <label htmlFor="new-skill-enabled">Enabled from the start</label>
      </div>
      {create.error && Object.keys(server).length === 0 ? <ErrorNotice error={create.error} /> : null}
      {create.error && Object.keys(server).length > 0 ? (
        <p className="field-error" role="alert">
          {create.error.message}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Create skill
        </button>
      </div>
    </form>
  );
}
