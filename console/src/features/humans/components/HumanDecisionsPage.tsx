import { PageHeader } from "../../../components/PageHeader";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { Link, useSearch } from "../../../lib/router";
import { useHumanDecisions } from "../api/queries";

const KIND_LABEL: Record<string, string> = {
  operator_instruction: "operator instruction",
  plan_step_approval: "plan step approval",
};

/** What people decided about one subject, oldest first: the last one is the newest intent. */
export function HumanDecisionsPage({ subjectId }: { subjectId: string }) {
  const [search, setSearch] = useSearch();
  const cursor = search.get("cursor") ?? "";
  const decisions = useHumanDecisions(subjectId, cursor);
  return (
    <>
      <PageHeader title={`Human decisions for ${subjectId}`}>
        <Link to={`/decisions`}>Decisions</Link>
      </PageHeader>
      <p className="hint">
        Instructions and approvals people gave about this subject, oldest first. Each outranks what an agent decided before
        it.
      </p>
      <QueryView query={decisions} what="human decisions">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>No person has decided anything about {subjectId}.</Empty>
          ) : (
            <>
              <ol className="timeline">
                {page.items.map((d) => (
                  <li key={d.id} className="timeline-item">
                    <p className="timeline-head">
                      <strong>{KIND_LABEL[d.kind] ?? d.kind}</strong> by {d.author || "unknown author"} ·{" "}
                      <Time iso={d.written_at} />
                      {d.plan_ref ? (
                        <>
                          {" "}
                          · plan <code>{d.plan_ref}</code>
                          {d.step ? ` step ${d.step}` : ""}
                        </>
                      ) : null}
                    </p>
                    <p className="timeline-body">{d.body}</p>
                    <p className="hint">
                      from {d.provider} ({d.external_id}), seen <Time iso={d.observed_at} />
                    </p>
                  </li>
                ))}
              </ol>
              {page.next_cursor ? (
                <button type="button" className="button" onClick={() => setSearch({ cursor: page.next_cursor ?? "" })}>
                  Later decisions
                </button>
              ) : null}
            </>
          )
        }
      </QueryView>
    </>
  );
}
