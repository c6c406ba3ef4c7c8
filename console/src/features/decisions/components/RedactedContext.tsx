import { useState } from "react";
import { QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { useDecisionContext } from "../api/queries";
import { redactionNote } from "../logic/context";

/** Role 1's look at a decision's context, redacted; nothing is read until asked (each read is audited). */
export function RedactedContext({ decisionId }: { decisionId: string }) {
  const [asked, setAsked] = useState(false);
  const context = useDecisionContext(decisionId, asked);
  return (
    <section className="panel" aria-labelledby="context-heading">
      <h2 id="context-heading">Context</h2>
      <p className="hint">
        It holds rider and customer data, so it shows as the playground sends it to the model: names, phones, e-mail
        addresses and exact places replaced by placeholders. Each look is recorded in the audit log under your name.
      </p>
      {!asked ? (
        <button type="button" className="button" onClick={() => setAsked(true)}>
          Show redacted context
        </button>
      ) : (
        <QueryView query={context} what="the redacted context">
          {(read) => (
            <>
              <p role="status" className="redaction-note">
                {redactionNote(read.redacted, read.erased_at !== null)}
                {read.erased_at ? (
                  <>
                    {" "}
                    Erased <Time iso={read.erased_at} />.
                  </>
                ) : null}
              </p>
              {read.erased_at ? null : (
                <pre className="context-json" tabIndex={0} aria-label="The decision's context, redacted">
                  {JSON.stringify(read.context, null, 2)}
                </pre>
              )}
            </>
          )}
        </QueryView>
      )}
    </section>
  );
}
