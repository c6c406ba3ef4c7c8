"""Wires the decisions context into a gRPC server."""

from __future__ import annotations

import grpc
from sqlalchemy.engine import make_url

from outrider.v1 import decisions_pb2, decisions_pb2_grpc, outcomes_pb2_grpc, registry_pb2_grpc
from services.common import retention as common_retention
from services.common.callers import Access
from services.common.runtime import Runtime
from services.common.settings import Settings, SettingsError
from services.decisions import precedent, retention, store
from services.decisions.clients import OutcomesClient, RegistryClient
from services.decisions.connections import DirectConnections
from services.decisions.precedent import JudgedCounts
from services.decisions.service import DecisionsService

SERVICE_NAMES = (decisions_pb2.DESCRIPTOR.services_by_name["Decisions"].full_name,)
# The largest request this context takes. A batch of recorded decisions with their contexts and embeddings.
MAX_REQUEST_BYTES = 8 * 1024 * 1024
# Who may call what (services.common.callers). Engines record, search, judge
# by API and lease; the judge's batch calls are the platform's own; a
# person's re-judging goes through SetOutcome too, the judge read from the
# verified caller (rules.verdict_judge), and refused to anyone but role 1.
ACCESS = {
    "RecordDecision": Access.ENGINE,
    "RecordDecisions": Access.ENGINE,
    "FindSimilar": Access.ENGINE,
    "SearchPrecedents": Access.ENGINE,
    "SetOutcome": Access.ENGINE,
    "RegisterSubject": Access.ENGINE,
    "RecordHumanInput": Access.ENGINE,
    "LeaseSubject": Access.ENGINE,
    "ListDecisions": Access.READ,
    "GetDecision": Access.READ,
    "ListHumanDecisions": Access.READ,
    "ListPending": Access.SERVICE,
    "SetOutcomes": Access.SERVICE,
    "CountOutcomes": Access.SERVICE,
    # A person's request to erase a subject's data: role 1 only.
    "EraseSubject": Access.WRITE,
    # A decision's context holds rider and customer data: even redacted,
    # only role 1 reads it, and each read is audited.
    "GetDecisionContext": Access.WRITE,
    "CountAgentRefusals": Access.SERVICE,
    # Counts the outcomes context reads: the rollout guard's per arm, the
    # off-policy estimate's weights, autonomy evidence and the alert windows.
    "CountRolloutArms": Access.SERVICE,
    "WeighDecisions": Access.SERVICE,
    "CountExecutions": Access.SERVICE,
    "CountJudgedWindows": Access.SERVICE,
    # The console's judged-success chart, read for a staff member.
    "CountOutcomeSeries": Access.READ,
    "ListDecisionFacets": Access.READ,
}
USES_NATS = False

# Eight engines searching at once keep eight busy; two spare let a search
# for a width no idle connection has wait for none.
SEARCH_CONNECTIONS = 10
# Records arrive in batches (RecordDecisions), one in flight per engine client.
RECORD_CONNECTIONS = 4


def direct_connections(url: str, context: str, *, purpose: str, size: int) -> DirectConnections:
    """Driver connections for one hot statement; `purpose` (search, record)
    names them in pg_stat_activity, so an operator can tell them apart."""
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    return DirectConnections(
        dsn,
        size=size,
        server_settings={"search_path": f"{context},public", "application_name": f"outrider-{context}-{purpose}"},
        prepare=store.prepare_direct,
    )


def migration_settings(settings: Settings) -> dict[str, str]:
    """Read by the first migration only: it fixes the embedding column's size."""
    return {"outrider.embedding_dim": str(settings.embedding_dimension)}


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    async with runtime.engine.connect() as conn:
        dimension = await store.embedding_dimension(conn)
    if dimension != runtime.settings.embedding_dimension:
        # Stored vectors cannot be resized, and serving the old size while the
        # setting names another would refuse every engine that obeys the
        # setting; stopping here names the mismatch once, at deploy time.
        raise SettingsError(
            f"OUTRIDER_EMBEDDING_DIM is {runtime.settings.embedding_dimension}, but the decisions schema"
            f" was created with {dimension}-dimension embeddings; set it back to {dimension}"
            " or migrate into a new database"
        )
    url = runtime.settings.database_url
    assert url, "a context runs only with its database configured"
    searches = direct_connections(url, runtime.context, purpose="search", size=SEARCH_CONNECTIONS)
    records = direct_connections(url, runtime.context, purpose="record", size=RECORD_CONNECTIONS)
    runtime.on_close(searches.close)
    runtime.on_close(records.close)
    # Counting judged rows is not a search: it takes the shared pool.
    precedents = precedent.PrecedentSearch(searches, counts=JudgedCounts(runtime.engine))
    service = DecisionsService(
        runtime,
        dimension=dimension,
        precedents=precedents,
        records=records,
        outcomes=OutcomesClient(runtime.clients.stub("outcomes", outcomes_pb2_grpc.OutcomesStub)),
        registry=RegistryClient(runtime.clients.stub("registry", registry_pb2_grpc.RegistryStub)),
    )
    decisions_pb2_grpc.add_DecisionsServicer_to_server(service, server)
    runtime.spawn(
        retention.run(
            runtime.engine,
            retention_days=runtime.settings.decision_retention_days,
            day=common_retention.days(runtime.settings, 1),
            interval_s=common_retention.interval_s(runtime.settings),
        ),
        name="retention",
    )
