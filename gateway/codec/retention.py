"""Each context's retention counts (the `Retention` service every context with
a lifetime on its tables serves) as Prometheus text."""

from __future__ import annotations

from collections.abc import Mapping

from outrider.v1 import common_pb2

# The contexts whose tables have a lifetime, and so serve `Retention`.
RETAINING = ("outcomes", "playground", "telemetry")
# What one context answers, named here so the route need not import the message module.
Report = common_pb2.RetentionReport


def retention_request() -> common_pb2.GetRetentionRequest:
    return common_pb2.GetRetentionRequest()


def exposition(reports: Mapping[str, Report]) -> str:
    """Prometheus text format 0.0.4; a context missing from `reports` (it did
    not answer this scrape) has no samples rather than zeros."""
    deleted = "outrider_retention_deleted_total"
    keep = "outrider_retention_keep_seconds"
    failed = "outrider_retention_failed_passes_total"
    lines = [
        f"# HELP {deleted} Rows the context's retention job deleted, per table, since the replica started.",
        f"# TYPE {deleted} counter",
    ]
    # Context and table names are the platform's own, never a caller's.
    for context, report in sorted(reports.items()):
        lines += [f'{deleted}{{context="{context}",table="{t.table}"}} {t.deleted}' for t in report.tables]
    lines += [f"# HELP {keep} How long the table's rows are kept.", f"# TYPE {keep} gauge"]
    for context, report in sorted(reports.items()):
        lines += [f'{keep}{{context="{context}",table="{t.table}"}} {t.keep_seconds}' for t in report.tables]
    lines += [
        f"# HELP {failed} Retention passes that failed and wait for the next interval.",
        f"# TYPE {failed} counter",
    ]
    lines += [f'{failed}{{context="{context}"}} {report.failed_passes}' for context, report in sorted(reports.items())]
    return "\n".join(lines) + "\n"
