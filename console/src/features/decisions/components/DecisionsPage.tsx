import { useState, type SubmitEvent } from "react";
import { PageHeader } from "../../../components/PageHeader";
import { PageSizeSelect, Pager, useKeysetPages } from "../../../components/Pager";
import { pageSizeFromSearch, pageSizeToSearch } from "../../../components/pageSize";
import { OutcomeBadge } from "../../../components/Badges";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatRate } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import {
  activeFilterCount,
  filtersFromSearch,
  filtersToSearch,
  OUTCOMES,
  presetRange,
  RANGE_PRESETS,
  type DecisionFilters,
} from "../logic/filters";
import { PAGE_SIZE, useDecisions, useFilterChoices } from "../api/queries";
import { ExportControl } from "./ExportControl";
import { AgentName } from "../../../components/AgentName";
import { BadgeLegend } from "../../../components/BadgeLegend";

export function DecisionsPage() {
  const [search] = useSearch();
  const filters = filtersFromSearch(search);
  const limit = pageSizeFromSearch(search, PAGE_SIZE);
  const withLimit = (next: Record<string, string>, size = limit) => ({ ...next, ...pageSizeToSearch(size, PAGE_SIZE) });
  const pages = useKeysetPages((cursor) => withLimit(filtersToSearch(filters, cursor)));
  const decisions = useDecisions(filters, pages.cursor, limit);

  const apply = (next: DecisionFilters) => {
    pages.restart(withLimit(filtersToSearch(next)));
  };

  return (
    <>
      <PageHeader title="Decisions">
        <ExportControl filters={filters} />
      </PageHeader>
      <Filters key={JSON.stringify(filters)} filters={filters} onApply={apply} />
      <BadgeLegend kinds={["outcome"]} />
      <QueryView query={decisions} what="decisions">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>
              {activeFilterCount(filters) > 0 ? "No decision matches these filters." : "No agent has recorded a decision yet."}
            </Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table aria-describedby="decisions-note">
                  <caption id="decisions-note" className="caption">
                    Newest first. The context each agent saw is not shown: it holds rider and customer data.
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Decided</th>
                      <th scope="col">Type</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Subject</th>
                      <th scope="col">Action</th>
                      <th scope="col" className="num">
                        Confidence
                      </th>
                      <th scope="col">Model</th>
                      <th scope="col">Outcome</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((decision) => (
                      <tr key={decision.id}>
                        <td>
                          <Link to={`/decisions/${decision.id}`}>
                            <Time iso={decision.decided_at} />
                          </Link>
                        </td>
                        <td>{decision.decision_type}</td>
                        <td>
                          <AgentName id={decision.agent_id} />
                        </td>
                        <td>
                          <Link to={`/subjects/${encodeURIComponent(decision.subject_id)}`}>{decision.subject_id}</Link>
                        </td>
                        <td>{decision.action}</td>
                        <td className="num">{formatRate(decision.confidence)}</td>
                        <td>{decision.model ?? "—"}</td>
                        <td>
                          <OutcomeBadge outcome={decision.outcome} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                pages={pages}
                nextCursor={page.next_cursor}
                label="Decision pages"
                previousLabel="Previous page"
                nextLabel="Next page"
              >
                <span className="hint" aria-live="polite">
                  Page {pages.number} · {page.items.length} of at most {limit}
                </span>
                <PageSizeSelect id="decisions-limit" value={limit} onChange={(size) => pages.restart(withLimit(filtersToSearch(filters), size))} />
              </Pager>
            </>
          )
        }
      </QueryView>
    </>
  );
}

function Filters({ filters, onApply }: { filters: DecisionFilters; onApply: (next: DecisionFilters) => void }) {
  const [draft, setDraft] = useState(filters);
  const choices = useFilterChoices();
  const set = (field: keyof DecisionFilters) => (event: { target: { value: string } }) =>
    setDraft({ ...draft, [field]: event.target.value });
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  const empty: DecisionFilters = { decision_type: "", agent_id: "", subject_id: "", outcome: "", model: "", from: "", to: "" };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter decisions">
      <div className="field">
        <label htmlFor="f-subject">Subject</label>
        <input
          id="f-subject"
          type="search"
          value={draft.subject_id}
          onChange={set("subject_id")}
          placeholder="booking or subject id"
          autoComplete="off"
          spellCheck={false}
          aria-keyshortcuts="/"
          data-page-search=""
        />
      </div>
      <div className="field">
        <label htmlFor="f-type">Type</label>
        <select id="f-type" value={draft.decision_type} onChange={set("decision_type")}>
          <option value="">Any type</option>
          {[...new Set([...(choices.data?.types ?? []), ...(draft.decision_type ? [draft.decision_type] : [])])].map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-agent">Agent</label>
        <select id="f-agent" value={draft.agent_id} onChange={set("agent_id")}>
          <option value="">Any agent</option>
          {[...new Set([...(choices.data?.agents ?? []), ...(draft.agent_id ? [draft.agent_id] : [])])].map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-outcome">Outcome</label>
        <select id="f-outcome" value={draft.outcome} onChange={set("outcome")}>
          <option value="">Any outcome</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-model">Model</label>
        <input id="f-model" value={draft.model} onChange={set("model")} placeholder="any model" autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="f-from">Decided from</label>
        <input id="f-from" type="datetime-local" value={draft.from} onChange={set("from")} />
      </div>
      <div className="field">
        <label htmlFor="f-to">Decided before</label>
        <input id="f-to" type="datetime-local" value={draft.to} onChange={set("to")} />
      </div>
      <div className="field">
        <span className="label-like" id="f-range">
          Range
        </span>
        <div className="range-presets" role="group" aria-labelledby="f-range">
          {RANGE_PRESETS.map((preset) => (
            <button
              key={preset.label}
              type="button"
              className="button button-small"
              onClick={() => {
                const next = { ...draft, ...presetRange(preset.hours, Date.now()) };
                setDraft(next);
                onApply(next);
              }}
            >
              {preset.label}
            </button>
          ))}
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary">
          Apply filters
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setDraft(empty);
            onApply(empty);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
