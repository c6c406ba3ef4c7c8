import { useId } from "react";
import type { Agent } from "../../../api/resources";
import { useCanWrite } from "../../../lib/SessionContext";
import { ErrorNotice } from "../../../components/States";
import { modelOptions } from "../logic/agents";
import { useUpdateAgent } from "../api/queries";

const ENGINE_DEFAULT = "";

export function ModelPicker({ agent }: { agent: Agent }) {
  const canWrite = useCanWrite();
  const update = useUpdateAgent(agent.id);
  const id = useId();
  return (
    <>
      <dt>{canWrite ? <label htmlFor={id}>Model</label> : "Model"}</dt>
      <dd>
        {canWrite ? (
          <select
            id={id}
            value={agent.model ?? ENGINE_DEFAULT}
            aria-busy={update.isPending || undefined}
            onChange={(event) => update.mutate({ model: event.target.value || null })}
          >
            <option value={ENGINE_DEFAULT}>Engine default</option>
            {modelOptions(agent.model).map((model) => (
              <option key={model} value={model}>
                {model}
              </option>
            ))}
          </select>
        ) : (
          <span>{agent.model ?? "Engine default"}</span>
        )}
        {update.error ? <ErrorNotice error={update.error} /> : null}
      </dd>
    </>
  );
}
