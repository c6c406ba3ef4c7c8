import { PageHeader } from "../../../components/PageHeader";
import { Empty, QueryView } from "../../../components/States";
import { Link } from "../../../lib/router";
import { useRun } from "../api/queries";
import { FinalAnswer, StepView, TraceSummary } from "./TraceView";

export function RunPage({ runId }: { runId: string }) {
  const run = useRun(runId);
  return (
    <>
      <PageHeader title="Playground run">
        <Link to="/playground">Back to the playground</Link>
      </PageHeader>
      <QueryView query={run} what="the run">
        {(trace) => (
          <>
            <section className="panel" aria-labelledby="prompt-heading">
              <h2 id="prompt-heading">Prompt (as sent, redacted)</h2>
              <p className="final-text">{trace.prompt}</p>
            </section>
            <TraceSummary trace={trace} />
            <h2>Steps</h2>
            {trace.steps.length > 0 ? (
              <ol className="steps">
                {trace.steps.map((step, index) => (
                  <StepView key={index} step={step} index={index} />
                ))}
              </ol>
            ) : (
              <Empty>The model answered without calling a tool.</Empty>
            )}
            <FinalAnswer trace={trace} />
          </>
        )}
      </QueryView>
    </>
  );
}
