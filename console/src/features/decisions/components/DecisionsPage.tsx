import { ExportControl } from "../../../components/ExportControl";
import { Freshness } from "../../../components/Freshness";
import { ChoiceField, FilterForm, InstantField, RangePresets, TextField } from "../../../components/FilterForm";
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
  filtersToQuery,
  filtersToSearch,
  NO_FILTERS,
  OUTCOMES,
  presetRange,
  RANGE_PRESETS,
  type DecisionFilters,
} from "../logic/filters";
import { PAGE_SIZE, useDecisions, useFilterChoices } from "../api/queries";
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
        {decisions.data ? <Freshness fetchedAt={decisions.dataUpdatedAt} /> : null}
        <ExportControl path="/admin/ai/decisions/export" query={filtersToQuery(filters)} noun="decisions" />
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
  const choices = useFilterChoices();
  return (
    <FilterForm label="Filter decisions" filters={filters} empty={NO_FILTERS} onApply={onApply}>
      {({ draft, set, applyNow }) => (
        <>
          <TextField
            id="f-subject"
            label="Subject"
            value={draft.subject_id}
            onChange={(value) => set("subject_id", value)}
            placeholder="booking or subject id"
            search
          />
          <ChoiceField
            id="f-type"
            label="Type"
            value={draft.decision_type}
            anyLabel="Any type"
            choices={choices.data?.types ?? []}
            onChange={(value) => set("decision_type", value)}
          />
          <ChoiceField
            id="f-agent"
            label="Agent"
            value={draft.agent_id}
            anyLabel="Any agent"
            choices={choices.data?.agents ?? []}
            onChange={(value) => set("agent_id", value)}
          />
          <ChoiceField id="f-outcome" label="Outcome" value={draft.outcome} anyLabel="Any outcome" choices={OUTCOMES} onChange={(value) => set("outcome", value)} />
          <TextField
            id="f-model"
            label="Model"
            value={draft.model}
            onChange={(value) => set("model", value)}
            placeholder="any model"
            suggestions={choices.data?.models}
          />
          <InstantField id="f-from" label="Decided from" value={draft.from} onChange={(value) => set("from", value)} />
          <InstantField id="f-to" label="Decided before" value={draft.to} onChange={(value) => set("to", value)} />
          <RangePresets id="f-range" presets={RANGE_PRESETS} onPick={(hours) => applyNow({ ...draft, ...presetRange(hours, Date.now()) })} />
        </>
      )}
    </FilterForm>
  );
}
