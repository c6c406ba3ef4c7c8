"""Every jsonb column gives back what its store wrote: every JSON type, nested, against real Postgres.

Issue 28, finding 1: after an ordinary model pin the audit log answered 500
for good, because the registry's store read a JSON string value again with
json.loads, which the driver had already decoded. The class is every jsonb
column of every context, each written and read through its own store.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common import guards
from services.common.db import context_engine
from services.outcomes import store as outcomes_store
from services.playground import store as playground_store
from services.registry import store as registry_store
from services.registry.rules import (
    Agent,
    AgentStatus,
    Executor,
    FieldChange,
    Runtime,
    Skill,
    SkillSource,
    Tool,
    ToolKind,
)
from tests.harness import bearer, gateway_client, running

# Text jsonb can hold: no NUL (Postgres) and no lone surrogate (UTF-8).
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(guards.INT64_MIN, guards.INT64_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=16
)
OBJECTS = st.dictionaries(TEXT, VALUES, max_size=5)
EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def same(sent: Any, read: Any) -> bool:
    """The value read is the value sent. jsonb keeps numbers as decimals,
    so 1e16 comes back as the integer it spells: the same number."""
    if isinstance(sent, bool) or sent is None or isinstance(sent, str):
        return type(read) is type(sent) and read == sent
    if isinstance(sent, float):
        return isinstance(read, int | float) and not isinstance(read, bool) and float(read) == sent
    if isinstance(sent, int):
        return type(read) is int and read == sent
    if isinstance(sent, list):
        return isinstance(read, list) and len(read) == len(sent) and all(map(same, sent, read))
    return isinstance(read, dict) and read.keys() == sent.keys() and all(same(sent[k], read[k]) for k in sent)


def _roundtrip(url: str, context: str, work: Any) -> Any:
    async def scenario() -> Any:
        engine = context_engine(url, context, pool_size=1, max_overflow=0)
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(scenario())


@EXAMPLES
@given(pairs=st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=6))
def test_registry_audit_values_of_every_json_type_read_back_as_written(settings, pairs) -> None:
    changes = [FieldChange(field=f"f{i}", old=old, new=new) for i, (old, new) in enumerate(pairs)]
    entity_id = uuid.uuid4().hex

    async def work(conn: Any) -> list[registry_store.AuditRow]:
        actor = registry_store.Actor(sub="u-1", email="ops@example.com")
        await registry_store.insert_audit(conn, entity="agent", entity_id=entity_id, changes=changes, actor=actor)
        return await registry_store.list_audit(conn, entity_id=entity_id, limit=50)

    rows = {row.field: row for row in _roundtrip(settings.database_url, "registry", work)}
    for change in changes:
        assert same(change.old, rows[change.field].old), (change.old, rows[change.field].old)
        assert same(change.new, rows[change.field].new), (change.new, rows[change.field].new)


@EXAMPLES
@given(schema=OBJECTS)
def test_a_tool_input_schema_of_any_shape_reads_back_as_written(settings, schema) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    tool = Tool(
        name=name,
        description="d",
        kind=ToolKind.READ,
        target="bookings",
        input_schema=schema,
        implemented_at="engine",
        owner_agents=("EXCEPTION_AGENT",),
        executor=Executor.ENGINE,
    )

    async def work(conn: Any) -> list[Tool]:
        await registry_store.upsert_tool(conn, tool=tool)
        return [t for t in await registry_store.list_tools(conn) if t.name == name]

    (read,) = _roundtrip(settings.database_url, "registry", work)
    assert same(schema, dict(read.input_schema))


@EXAMPLES
@given(thresholds=OBJECTS, schema=st.dictionaries(TEXT, OBJECTS, max_size=4))
def test_a_skill_s_thresholds_and_their_schema_read_back_as_written(settings, thresholds, schema) -> None:
    # The store is the class here: the rules would refuse most of these
    # shapes, but whatever they let through must read back as written.
    agent = Agent(
        id=f"A_{uuid.uuid4().hex[:12]}",
        name="a",
        class_ref="a.A",
        runtime=Runtime.CONSOLE,
        purpose="p",
        wake_on="w",
        writes_to="n",
        status=AgentStatus.LIVE,
        status_note="",
        has_autonomy_gate=False,
        autonomous=False,
        model=None,
    )
    skill = Skill(
        id=f"s_{uuid.uuid4().hex[:12]}",
        agent_id=agent.id,
        title="t",
        category="",
        description="",
        sample_prompt="",
        source=SkillSource.CONSOLE,
        enabled=True,
        disabled_reason=None,
        thresholds=thresholds,
        thresholds_schema=schema,
        version=1,
        tool_names=(),
    )

    async def work(conn: Any) -> Any:
        await registry_store.insert_agent(conn, agent=agent)
        await registry_store.insert_skill(conn, skill=skill, updated_by="u-1")
        return await registry_store.get_skill(conn, skill_id=skill.id)

    read = _roundtrip(settings.database_url, "registry", work).skill
    assert same(thresholds, dict(read.thresholds)) and same(schema, dict(read.thresholds_schema))


@EXAMPLES
@given(document=OBJECTS)
def test_a_facts_document_of_any_shape_reads_back_as_written(settings, document) -> None:
    subject = uuid.uuid4().hex

    async def work(conn: Any) -> Any:
        await outcomes_store.lock_facts(conn, subject_ids=[subject])
        await outcomes_store.save_facts(conn, documents={subject: document})
        return await outcomes_store.get_facts(conn, subject_id=subject)

    assert same(document, _roundtrip(settings.database_url, "outcomes", work))


@EXAMPLES
@given(steps=st.lists(OBJECTS, max_size=4), counts=st.dictionaries(TEXT, st.integers(0, 2**31), max_size=4))
def test_a_run_s_steps_and_redaction_counts_read_back_as_written(settings, steps, counts) -> None:
    row = playground_store.RunRow(
        id=uuid.uuid4(),
        agent_id="EXCEPTION_AGENT",
        skill_id="s",
        model="m",
        prompt="p",
        turns=1,
        input_tokens=0,
        output_tokens=0,
        total_ms=1,
        final_text="",
        stop_reason="end_turn",
        error="",
        steps=steps,
        step_count=len(steps),
        created_by="u-1",
        created_by_email="ops@example.com",
        created_at=datetime.now(UTC),
        redactions=counts,
        status="finished",
    )

    async def work(conn: Any) -> Any:
        await playground_store.start_run(conn, row=row)
        return await playground_store.get_run(conn, id=row.id)

    read = _roundtrip(settings.database_url, "playground", work)
    assert same(steps, read.steps) and same(counts, read.redactions)


async def test_the_audit_answers_after_a_model_pin(settings) -> None:
    """The exact reproduction: PATCH a model pin, then read the audit."""
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        pinned = await client.patch(
            "/admin/ai/agents/EXCEPTION_AGENT", json={"model": "claude-sonnet-4-5"}, headers=bearer(role=1)
        )
        audit = await client.get("/admin/ai/audit", headers=bearer(role=3))
        recent = await client.get(
            "/admin/ai/audit", params={"entity": "agent", "entity_id": "EXCEPTION_AGENT"}, headers=bearer(role=3)
        )
    assert pinned.status_code == 200, pinned.text
    assert audit.status_code == 200, audit.text
    assert recent.status_code == 200, recent.text
    change = next(row for row in recent.json()["items"] if row["field"] == "model")
    assert (change["old"], change["new"]) == (None, "claude-sonnet-4-5")
