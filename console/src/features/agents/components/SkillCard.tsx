import { useState } from "react";
import { ApiError } from "../../../api/client";
import type { Skill, Tool } from "../../../api/resources";
import { useCanWrite } from "../../../lib/SessionContext";
import { KindBadge } from "../../../components/Badges";
import { ErrorNotice } from "../../../components/States";
import { Switch } from "../../../components/Switch";
import { Link } from "../../../lib/router";
import { useUpdateSkill } from "../api/queries";
import { ConflictNotice } from "./ConflictNotice";
import { History } from "./History";
import { RolloutLauncher } from "./RolloutLauncher";
import { ThresholdEditor } from "./ThresholdEditor";

export function SkillCard({ skill, tools }: { skill: Skill; tools: Tool[] }) {
  const canWrite = useCanWrite();
  const update = useUpdateSkill(skill);
  const [conflict, setConflict] = useState(false);
  const kinds = Object.fromEntries(tools.map((tool) => [tool.name, tool.kind]));
  const blocked = !skill.enabled && skill.disabled_reason !== null;
  const reasonId = `skill-${skill.id}-reason`;

  const toggle = (next: boolean) => {
    setConflict(false);
    update.mutate(
      { enabled: next, version: skill.version },
      { onError: (error) => setConflict(error instanceof ApiError && error.code === "VERSION_CONFLICT") },
    );
  };

  return (
    <article className="skill" aria-labelledby={`skill-${skill.id}`}>
      <header className="skill-head">
        <div>
          <h4 id={`skill-${skill.id}`}>{skill.title}</h4>
          <p className="skill-meta">
            <code>{skill.id}</code> · {skill.category} · source <strong>{skill.source}</strong> · version {skill.version}
          </p>
        </div>
        <div className="skill-switch">
          {canWrite ? (
            <Switch
              checked={skill.enabled}
              label={`Enable ${skill.title}`}
              disabled={blocked}
              busy={update.isPending}
              describedBy={blocked ? reasonId : undefined}
              onChange={toggle}
            />
          ) : (
            <span className={`badge ${skill.enabled ? "badge-on" : "badge-off"}`}>{skill.enabled ? "enabled" : "disabled"}</span>
          )}
        </div>
      </header>
      {blocked ? (
        <p id={reasonId} className="notice notice-warn" role="note">
          Cannot be enabled: {skill.disabled_reason}
        </p>
      ) : null}
      {conflict ? <ConflictNotice /> : update.error ? <ErrorNotice error={update.error} /> : null}
      <p>{skill.description}</p>
      <p className="tool-chips" aria-label="Tools">
        {skill.tool_names.map((name) => (
          <span key={name} className="tool-chip">
            <code>{name}</code> {kinds[name] ? <KindBadge kind={kinds[name]} /> : null}
          </span>
        ))}
      </p>
      {Object.keys(skill.thresholds_schema).length > 0 ? <ThresholdEditor skill={skill} /> : null}
      <RolloutLauncher skill={skill} />
      <div className="skill-foot">
        <History entity="skill" id={skill.id} />
        <Link to={`/playground?agent=${encodeURIComponent(skill.agent_id)}&skill=${encodeURIComponent(skill.id)}`}>
          Try {skill.title} in the playground
        </Link>
      </div>
    </article>
  );
}
