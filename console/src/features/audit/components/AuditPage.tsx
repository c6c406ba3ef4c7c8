import { useState, type SubmitEvent } from "react";
import { PageHeader } from "../../../components/PageHeader";
import { Pager, useKeysetPages } from "../../../components/Pager";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatJson } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import type { AuditFilters } from "../api/keys";
import { useAudit } from "../api/queries";

export function AuditPage() {
  const [search] = useSearch();
  const filters: AuditFilters = {
    entity: search.get("entity") ?? "",
    entity_id: search.get("entity_id") ?? "",
    actor: search.get("actor") ?? "",
  };
  const pages = useKeysetPages((cursor) => ({ ...filters, cursor }));
  const [draft, setDraft] = useState(filters);
  const audit = useAudit(filters, pages.cursor);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    pages.restart({ ...draft });
  };

  return (
    <>
      <PageHeader title="Audit" />
      <form className="filters" onSubmit={submit} aria-label="Filter the audit log">
        <div className="field">
          <label htmlFor="a-entity">Entity</label>
          <select id="a-entity" value={draft.entity} onChange={(e) => setDraft({ ...draft, entity: e.target.value })}>
            <option value="">Agents and skills</option>
            <option value="agent">agent</option>
            <option value="skill">skill</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="a-id">Entity id</label>
          <input id="a-id" value={draft.entity_id} onChange={(e) => setDraft({ ...draft, entity_id: e.target.value })} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="a-actor">Changed by (email or id)</label>
          <input id="a-actor" value={draft.actor} onChange={(e) => setDraft({ ...draft, actor: e.target.value })} autoComplete="off" />
        </div>
        <div className="form-actions">
          <button type="submit" className="button button-primary">
            Apply filters
          </button>
        </div>
      </form>
      <QueryView query={audit} what="the audit log">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>No registry change matches.</Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <caption className="caption">Every registry change, newest first.</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Entity</th>
                      <th scope="col">Field</th>
                      <th scope="col">Before</th>
                      <th scope="col">After</th>
                      <th scope="col">By</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((row) => (
                      <tr key={row.id}>
                        <td>
                          <Time iso={row.changed_at} />
                        </td>
                        <td>
                          {row.entity}{" "}
                          {row.entity === "agent" ? (
                            <Link to={`/agents/${encodeURIComponent(row.entity_id)}`}>{row.entity_id}</Link>
                          ) : (
                            <code>{row.entity_id}</code>
                          )}
                        </td>
                        <td>{row.field}</td>
                        <td>
                          <code className="json">{formatJson(row.old)}</code>
                        </td>
                        <td>
                          <code className="json">{formatJson(row.new)}</code>
                        </td>
                        <td>{row.changed_by_email || row.changed_by}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                pages={pages}
                nextCursor={page.next_cursor}
                label="Audit pages"
                previousLabel="Newer changes"
                nextLabel="Older changes"
              />
            </>
          )
        }
      </QueryView>
    </>
  );
}
