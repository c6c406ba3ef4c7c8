import { ChoiceField, FilterForm, InstantField, TextField } from "../../../components/FilterForm";
import { ExportControl } from "../../../components/ExportControl";
import { Freshness } from "../../../components/Freshness";
import { PageHeader } from "../../../components/PageHeader";
import { PageSizeSelect, Pager, useKeysetPages } from "../../../components/Pager";
import { pageSizeFromSearch, pageSizeToSearch } from "../../../components/pageSize";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { Link, useSearch } from "../../../lib/router";
import { useSkillAgents } from "../../../components/skillAgents";
import { PAGE_SIZE, useAudit } from "../api/queries";
import { AgentName } from "../../../components/AgentName";
import { ChangeDiff } from "../../../components/ChangeDiff";
import {
  AUDIT_ENTITIES,
  entityPath,
  filtersFromSearch,
  filtersToQuery,
  filtersToSearch,
  NO_FILTERS,
  rangeProblem,
  type AuditFilters,
} from "../logic/audit";

const ENTITY_LABEL: Record<string, string> = {
  agent: "agents",
  skill: "skills",
  rollout: "rollouts",
  decision: "verdicts on decisions",
  subject: "erasures of a subject's data",
  run: "playground runs",
};

export function AuditPage() {
  const [search] = useSearch();
  const filters = filtersFromSearch(search);
  const problem = rangeProblem(filters);
  const limit = pageSizeFromSearch(search, PAGE_SIZE);
  const withLimit = (next: Record<string, string>, size = limit) => ({ ...next, ...pageSizeToSearch(size, PAGE_SIZE) });
  const pages = useKeysetPages((cursor) => withLimit(filtersToSearch(filters, cursor)));
  const audit = useAudit(filters, pages.cursor, limit, problem === null);
  const skillAgents = useSkillAgents();

  return (
    <>
      <PageHeader title="Audit">
        {audit.data ? <Freshness fetchedAt={audit.dataUpdatedAt} /> : null}
        {problem === null ? <ExportControl path="/admin/ai/audit/export" query={filtersToQuery(filters)} noun="changes" /> : null}
      </PageHeader>
      <Filters key={search.toString()} filters={filters} onApply={(next) => pages.restart(withLimit(filtersToSearch(next)))} />
      {problem ? (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      ) : (
        <QueryView query={audit} what="the audit log">
          {(page) =>
            page.items.length === 0 ? (
              <Empty>No change matches.</Empty>
            ) : (
              <>
                <div className="table-wrap" tabIndex={0} role="region" aria-label="Changes, scrolls sideways on a narrow screen">
                  <table>
                    <caption className="caption">Every change, newest first: only what changed, before → after.</caption>
                    <thead>
                      <tr>
                        <th scope="col">When</th>
                        <th scope="col">Changed</th>
                        <th scope="col">Change</th>
                        <th scope="col">By</th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.items.map((row) => {
                        const path = entityPath(row.entity, row.entity_id, skillAgents);
                        return (
                          <tr key={row.id}>
                            <td>
                              <Time iso={row.changed_at} />
                            </td>
                            <td>
                              {row.entity}{" "}
                              {row.entity === "agent" ? (
                                <AgentName id={row.entity_id} link />
                              ) : path ? (
                                <Link to={path}>{row.entity_id}</Link>
                              ) : (
                                <code>{row.entity_id}</code>
                              )}
                            </td>
                            <td>
                              <ChangeDiff field={row.field} before={row.old} after={row.new} />
                            </td>
                            <td>
                              <Link to={`/audit?${new URLSearchParams({ actor: row.changed_by_email || row.changed_by }).toString()}`}>
                                {row.changed_by_email || row.changed_by}
                              </Link>
                            </td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
                <Pager
                  pages={pages}
                  nextCursor={page.next_cursor}
                  label="Audit pages"
                  previousLabel="Newer changes"
                  nextLabel="Older changes"
                >
                  <PageSizeSelect id="audit-limit" value={limit} onChange={(size) => pages.restart(withLimit(filtersToSearch(filters), size))} />
                </Pager>
              </>
            )
          }
        </QueryView>
      )}
    </>
  );
}

function Filters({ filters, onApply }: { filters: AuditFilters; onApply: (next: AuditFilters) => void }) {
  return (
    <FilterForm label="Filter the audit log" filters={filters} empty={NO_FILTERS} onApply={onApply}>
      {({ draft, set }) => (
        <>
          <ChoiceField
            id="a-entity"
            label="Entity"
            value={draft.entity}
            anyLabel="Every kind of change"
            choices={AUDIT_ENTITIES}
            labelOf={(entity) => ENTITY_LABEL[entity] ?? entity}
            onChange={(value) => set("entity", value)}
          />
          <TextField id="a-id" label="Entity id" value={draft.entity_id} onChange={(value) => set("entity_id", value)} />
          <TextField id="a-actor" label="Changed by (email or id)" value={draft.actor} onChange={(value) => set("actor", value)} />
          <InstantField id="a-from" label="Changed from" value={draft.from} onChange={(value) => set("from", value)} />
          <InstantField id="a-to" label="Changed before" value={draft.to} onChange={(value) => set("to", value)} />
        </>
      )}
    </FilterForm>
  );
}
