import { useEffect } from "react";
import type { ModelArm } from "../../../api/resources";
import { AgentName } from "../../../components/AgentName";
import { PageHeader } from "../../../components/PageHeader";
import { useSkillAgents } from "../../../components/skillAgents";
import { SortHeader, useSortedRows, type SortColumn } from "../../../components/SortableTable";
import { Empty, ErrorNotice, Loading, QueryView } from "../../../components/States";
import { formatCount, formatCredit, formatRate } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { useCanWrite } from "../../../lib/SessionContext";
import { pinPath } from "../../../lib/pinLinks";
import { credibleInterval, curvePath, densityCurve } from "../../../lib/beta";
import type { RoutingKey } from "../api/keys";
import { useConversationMetrics, useRouting, useRoutingChoices } from "../api/queries";

// CSS variables, so each series follows the colour scheme; an SVG
// presentation attribute cannot read a variable, a style can.
const PALETTE = ["var(--series-1)", "var(--series-2)", "var(--series-3)", "var(--series-4)", "var(--series-5)"];

export function RoutingPage() {
  const [search, setSearch] = useSearch();
  const choices = useRoutingChoices();
  const key: RoutingKey | null = search.get("skill")
    ? { by: "skill", value: search.get("skill") ?? "" }
    : search.get("decision_type")
      ? { by: "decision_type", value: search.get("decision_type") ?? "" }
      : null;
  const firstType = choices.data?.decisionTypes[0];
  useEffect(() => {
    if (key === null && firstType) setSearch({ decision_type: firstType });
  }, [key, firstType]);
  const routing = useRouting(key);
  // An engine agent's skill is named by the decision type it records.
  const skillAgents = useSkillAgents();
  const owner = key ? skillAgents[key.value] : undefined;
  // Another key has the same columns, so the models stay in the order chosen.
  const keptSort = { sort: search.get("sort") ?? "", order: search.get("order") ?? "" };

  return (
    <>
      <PageHeader title="Routing" />
      <p className="hint">
        Which model to send the next decision to: each model's judged successes and failures (decisions by the outcome
        judge, conversations by fractional credit) give a Beta posterior, and a Thompson draw picks.
      </p>
      <QueryView query={choices} what="routing keys">
        {(c) => (
          <form className="filters" aria-label="Routing key" onSubmit={(event) => event.preventDefault()}>
            <div className="field">
              <label htmlFor="r-type">Decision type</label>
              <select id="r-type" value={key?.by === "decision_type" ? key.value : ""} onChange={(e) => setSearch({ ...keptSort, decision_type: e.target.value })}>
                <option value="">—</option>
                {c.decisionTypes.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="r-skill">or skill</label>
              <select id="r-skill" value={key?.by === "skill" ? key.value : ""} onChange={(e) => setSearch({ ...keptSort, skill: e.target.value })}>
                <option value="">—</option>
                {c.skills.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </div>
          </form>
        )}
      </QueryView>
      {key === null ? (
        choices.data ? <Empty>No decision has been recorded yet, so there is nothing to route. Choose a skill above.</Empty> : null
      ) : (
        <>
          {owner ? (
            <p className="hint routing-owner">
              Used by <AgentName id={owner} link />: “pin…” beside a model opens its studio with the change ready to review;
              roll one out gradually from there too.
            </p>
          ) : null}
          <QueryView query={routing} what="routing evidence">
          {(r) =>
            r.arms.length === 0 ? (
              <Empty>No judged evidence for {r.key} yet: every model is as likely as any other.</Empty>
            ) : (
              <>
                <p className="pick" role="status">
                  For <strong>{r.key}</strong>, this draw picks <strong>{r.pick ?? "no model"}</strong>.
                </p>
                <PosteriorChart arms={r.arms} />
                <ArmsTable arms={r.arms} owner={owner} />
                <Metrics models={r.arms.map((a) => a.model)} />
              </>
            )
          }
          </QueryView>
        </>
      )}
    </>
  );
}

function PosteriorChart({ arms }: { arms: ModelArm[] }) {
  const width = 600;
  const height = 160;
  const curves = arms.map((arm) => densityCurve(arm.alpha, arm.beta, 240));
  const maxY = Math.max(...curves.flat().map((p) => p.y), 1);
  const label = arms
    .map((arm) => {
      const [low, high] = credibleInterval(arm.alpha, arm.beta);
      return `${arm.model}: mean ${formatRate(arm.posterior_mean, 1)}, 95 % between ${formatRate(low, 1)} and ${formatRate(high, 1)}`;
    })
    .join("; ");
  return (
    <figure className="chart chart-posterior">
      <figcaption>Posterior success rate per model (Beta density)</figcaption>
      <svg viewBox={`0 0 ${width} ${height + 22}`} role="img" aria-label={label}>
        <line x1={0} x2={width} y1={height} y2={height} className="axis" />
        {curves.map((curve, index) => (
          <path key={arms[index]?.model} d={curvePath(curve, width, height, maxY)} fill="none" style={{ stroke: PALETTE[index % PALETTE.length] }} strokeWidth={2.5} />
        ))}
        {[0, 0.25, 0.5, 0.75, 1].map((x) => (
          <text key={x} x={x * width} y={height + 16} className="tick" textAnchor={x === 0 ? "start" : x === 1 ? "end" : "middle"}>
            {x * 100} %
          </text>
        ))}
      </svg>
      <ul className="legend">
        {arms.map((arm, index) => (
          <li key={arm.model}>
            <span className="swatch" style={{ background: PALETTE[index % PALETTE.length] }} aria-hidden="true" /> {arm.model}
          </li>
        ))}
      </ul>
    </figure>
  );
}

const ARM_COLUMNS = {
  model: { value: (arm) => arm.model },
  successes: { value: (arm) => arm.successes, first: "descending" },
  failures: { value: (arm) => arm.failures, first: "descending" },
  mean: { value: (arm) => arm.posterior_mean, first: "descending" },
  pick: { value: (arm) => arm.pick_probability, first: "descending" },
} satisfies Record<string, SortColumn<ModelArm>>;

function ArmsTable({ arms, owner }: { arms: ModelArm[]; owner: string | undefined }) {
  const table = useSortedRows(arms, ARM_COLUMNS);
  const canWrite = useCanWrite();
  // Evidence adds up across models; a posterior mean or an interval does not.
  const sum = (of: (arm: ModelArm) => number) => arms.reduce((total, arm) => total + of(arm), 0);
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <SortHeader table={table} column="model">
              Model
            </SortHeader>
            <SortHeader table={table} column="successes" numeric>
              Successes
            </SortHeader>
            <SortHeader table={table} column="failures" numeric>
              Failures
            </SortHeader>
            <th scope="col">From decisions / conversations</th>
            <SortHeader table={table} column="mean" numeric>
              Posterior mean
            </SortHeader>
            <th scope="col">95 % interval</th>
            <SortHeader table={table} column="pick">
              Pick probability
            </SortHeader>
          </tr>
        </thead>
        <tbody>
          {table.rows.map((arm) => {
            const [low, high] = credibleInterval(arm.alpha, arm.beta);
            return (
              <tr key={arm.model}>
                <th scope="row">
                  {arm.model}
                  {owner && canWrite ? (
                    <>
                      {" "}
                      <Link to={pinPath(owner, arm.model)} className="pin-link" aria-label={`Pin ${arm.model} for ${owner}: review it in the studio`}>
                        pin…
                      </Link>
                    </>
                  ) : null}
                </th>
                <td className="num">{formatCredit(arm.successes)}</td>
                <td className="num">{formatCredit(arm.failures)}</td>
                <td>
                  {formatCount(arm.decisions.successes)}✓ {formatCount(arm.decisions.failures)}✗ judged ·{" "}
                  {formatCredit(arm.credit.successes)}✓ {formatCredit(arm.credit.failures)}✗ credit
                </td>
                <td className="num">{formatRate(arm.posterior_mean, 1)}</td>
                <td>
                  {formatRate(low, 1)} – {formatRate(high, 1)}
                </td>
                <td>
                  <span className="meter" aria-hidden="true">
                    <span className="meter-fill" style={{ width: `${Math.round(arm.pick_probability * 100)}%` }} />
                  </span>{" "}
                  {formatRate(arm.pick_probability)}
                </td>
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">All models</th>
            <td className="num">{formatCredit(sum((arm) => arm.successes))}</td>
            <td className="num">{formatCredit(sum((arm) => arm.failures))}</td>
            <td>
              {formatCount(sum((arm) => arm.decisions.successes))}✓ {formatCount(sum((arm) => arm.decisions.failures))}✗ judged ·{" "}
              {formatCredit(sum((arm) => arm.credit.successes))}✓ {formatCredit(sum((arm) => arm.credit.failures))}✗ credit
            </td>
            <td className="num">—</td>
            <td>—</td>
            <td>—</td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

function Metrics({ models }: { models: string[] }) {
  const results = useConversationMetrics(models);
  return (
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Conversation metrics</h2>
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Conversation metrics, scrolls sideways on a narrow screen">
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="num">
                Episodes
              </th>
              <th scope="col" className="num">
                First-turn resolution
              </th>
              <th scope="col" className="num">
                Turns to resolution
              </th>
              <th scope="col" className="num">
                Churn
              </th>
              <th scope="col" className="num">
                Pending
              </th>
            </tr>
          </thead>
          <tbody>
            {models.map((model, index) => {
              const result = results[index];
              if (!result || result.isPending)
                return (
                  <tr key={model}>
                    <th scope="row">{model}</th>
                    <td colSpan={5}>
                      <Loading what="metrics" />
                    </td>
                  </tr>
                );
              if (result.error)
                return (
                  <tr key={model}>
                    <th scope="row">{model}</th>
                    <td colSpan={5}>
                      <ErrorNotice error={result.error} />
                    </td>
                  </tr>
                );
              const m = result.data;
              return (
                <tr key={model}>
                  <th scope="row">{model}</th>
                  <td className="num">{formatCount(m.episodes)}</td>
                  <td className="num">{m.episodes ? formatRate(m.first_turn_resolution_rate, 1) : "—"}</td>
                  <td className="num">{m.resolved ? m.avg_turns_to_resolution.toFixed(1) : "—"}</td>
                  <td className="num">{m.episodes ? formatRate(m.churn_rate, 1) : "—"}</td>
                  <td className="num">{formatCount(m.pending)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
