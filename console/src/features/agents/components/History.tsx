import { useState } from "react";
import type { AuditEntity } from "../../../api/resources";
import { Time } from "../../../components/Time";
import { Empty, QueryView } from "../../../components/States";
import { ChangeDiff } from "../../../components/ChangeDiff";
import { Link } from "../../../lib/router";
import { useHistory } from "../api/queries";

/** The last changes of one agent or skill, read when opened. */
export function History({ entity, id }: { entity: AuditEntity; id: string }) {
  const [open, setOpen] = useState(false);
  const history = useHistory(entity, id, open);
  return (
    <details className="history" onToggle={(event) => setOpen((event.target as HTMLDetailsElement).open)}>
      <summary>Recent changes</summary>
      {open ? (
        <QueryView query={history} what="changes">
          {(page) =>
            page.items.length === 0 ? (
              <Empty>No changes recorded.</Empty>
            ) : (
              <ul className="history-list">
                {page.items.map((row) => (
                  <li key={row.id}>
                    <Time iso={row.changed_at} /> by {row.changed_by_email || row.changed_by}
                    <ChangeDiff field={row.field} before={row.old} after={row.new} />
                  </li>
                ))}
              </ul>
            )
          }
        </QueryView>
      ) : null}
      {open ? (
        <p>
          <Link to={`/audit?${new URLSearchParams({ entity, entity_id: id }).toString()}`}>Every change to this {entity} in the audit</Link>
        </p>
      ) : null}
    </details>
  );
}
