"""What the playground refuses, and the rate limit held across replicas."""

from __future__ import annotations

from services.common.runtime import ContextServer
from tests.harness import bearer, gateway_client, reserved_port, with_env
from tests.integration.playground.scripted import Say
from tests.integration.playground.support import RUN, count_rows, playground


async def test_the_status_says_whether_runs_can_call_the_model(settings, template, database):
    async with playground(settings, api_key=None, contexts=("playground",)) as pg:
        unconfigured = await pg.client.get("/admin/ai/playground/status", headers=bearer(role=3))
        refused = await pg.run("CUSTOMER_AGENT", "Hello")
    async with playground(settings, contexts=("playground",)) as pg:
        configured = await pg.client.get("/admin/ai/playground/status", headers=bearer(role=4))

    assert unconfigured.status_code == 200, unconfigured.text
    assert unconfigured.json()["configured"] is False
    # The words a run's refusal carries, before anyone types a prompt.
    assert unconfigured.json()["reason"] == refused.json()["error"]["message"]
    assert "ANTHROPIC_API_KEY" in unconfigured.json()["reason"]
    assert configured.json() == {"configured": True, "reason": "", "default_model": settings.playground_model}


async def test_without_an_api_key_the_answer_is_503_before_anything_else(settings, template, database):
    # Only the playground runs: a registry lookup would fail differently.
    # Before the agent lookup and the rate limit; only a body the document
    # rules out (a prompt over 2,000 characters) is refused before it.
    async with playground(settings, api_key=None, contexts=("playground",)) as pg:
        plain = await pg.run("NO_SUCH_AGENT", "x" * 2000)
        streamed = await pg.run("CUSTOMER_AGENT", "Hello", headers={"Accept": "text/event-stream"})

    for reply in (plain, streamed):
        assert reply.status_code == 503, reply.text
        assert reply.json()["error"]["code"] == "PLAYGROUND_NOT_CONFIGURED"
        assert "ANTHROPIC_API_KEY" in reply.json()["error"]["message"]
    assert pg.model.requests == []
    assert await count_rows(template.raw_dsn(database), "run_admissions") == 0


async def test_bad_requests_are_refused_by_name_and_spend_no_run(settings, template, database):
    async with playground(settings) as pg:
        too_long = await pg.run("CUSTOMER_AGENT", "x" * 2001)
        blank = await pg.run("CUSTOMER_AGENT", "   ")
        no_agent = await pg.run("", "Hello")
        unknown_agent = await pg.run("NO_SUCH_AGENT", "Hello")
        several_skills = await pg.run("CONSOLE_OPS_AGENT", "Hello")
        foreign_skill = await pg.run("CUSTOMER_AGENT", "Hello", skill_id="stall_response")
        wrong_type = await pg.client.post(RUN, json={"agent_id": 7, "prompt": "Hello"}, headers=bearer(role=1))
        reader = await pg.run("CUSTOMER_AGENT", "Hello", role=3)
        tenant = await pg.client.post(
            RUN, json={"agent_id": "CUSTOMER_AGENT", "prompt": "Hello"}, headers=bearer(role=1, tenant=5)
        )
        admissions = await count_rows(template.raw_dsn(database), "run_admissions")

    assert too_long.status_code == 422
    assert too_long.json()["error"]["code"] == "PROMPT_TOO_LONG"
    details = too_long.json()["error"]["details"]
    assert (list(details["fields"]), details["length"], details["max"]) == (["prompt"], 2001, 2000)
    assert (blank.status_code, next(iter(blank.json()["error"]["details"]["fields"]))) == (422, "prompt")
    assert (no_agent.status_code, next(iter(no_agent.json()["error"]["details"]["fields"]))) == (422, "agent_id")
    assert unknown_agent.status_code == 404
    assert unknown_agent.json()["error"]["code"] == "AGENT_NOT_FOUND"
    assert several_skills.status_code == 422
    assert next(iter(several_skills.json()["error"]["details"]["fields"])) == "skill_id"
    assert "sla_guardian" in several_skills.json()["error"]["details"]["skills"]
    assert (foreign_skill.status_code, foreign_skill.json()["error"]["code"]) == (422, "UNKNOWN_SKILL")
    assert (wrong_type.status_code, list(wrong_type.json()["error"]["details"]["fields"])) == (422, ["agent_id"])
    assert (reader.status_code, tenant.status_code) == (403, 403)
    assert pg.model.requests == []
    assert admissions == 0


async def test_ten_runs_per_user_per_ten_minutes_across_gateways_and_replicas(settings):
    async with playground(settings) as pg:
        # A second playground replica on its own port, with its own gateway:
        # the limit lives in Postgres, so both must see every admission.
        addrs = dict(pg.settings.context_addrs, playground=f"127.0.0.1:{reserved_port()}")
        replica_settings = with_env(pg.settings, context_addrs=addrs)
        replica = ContextServer("playground", replica_settings)
        await replica.start()
        try:
            async with gateway_client(replica_settings) as other:
                pg.model.script(Say("ok", usage=(1, 1)), repeat_last=True)
                body = {"agent_id": "CUSTOMER_AGENT", "prompt": "Hello"}
                answers = []
                for turn in range(10):
                    client = pg.client if turn % 2 else other
                    answers.append((await client.post(RUN, json=body, headers=bearer(sub="priya"))).status_code)
                over_here = await pg.client.post(RUN, json=body, headers=bearer(sub="priya"))
                over_there = await other.post(
                    RUN, json=body, headers={**bearer(sub="priya"), "Accept": "text/event-stream"}
                )
                # Nothing in the request names whose limit it spends: another
                # agent, prompt or skill, or an actor written into the body,
                # is still priya's run.
                escapes = [
                    await other.post(RUN, json=changed, headers=bearer(sub="priya"))
                    for changed in (
                        {"agent_id": "EXCEPTION_AGENT", "prompt": "Another question"},
                        {**body, "skill_id": "customer_notifications"},
                        {**body, "actor": {"sub": "arjun", "email": "arjun@example.com"}},
                    )
                ]
                someone_else = await other.post(RUN, json=body, headers=bearer(sub="arjun"))
        finally:
            await replica.stop(grace=0.5)

    assert answers == [200] * 10
    # Priya's ten and Arjun's one: no refused request reached the model.
    assert len(pg.model.requests) == 11
    for refused in (over_here, over_there):
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "RATE_LIMITED"
        assert (error["details"]["limit"], error["details"]["window_s"]) == (10, 600)
        assert 0 < error["details"]["retry_after_s"] <= 600
    assert [reply.status_code for reply in escapes] == [429, 429, 422]
    assert escapes[2].json()["error"]["details"]["fields"].keys() == {"actor"}
    assert someone_else.status_code == 200


async def test_runs_are_listed_newest_first_and_read_back(settings):
    async with playground(settings) as pg:
        pg.model.script(Say("one"), Say("two"), Say("three"))
        ids = [(await pg.run("CUSTOMER_AGENT", f"Run {n}")).json()["id"] for n in range(3)]
        reader = bearer(role=3)
        first = await pg.client.get("/admin/ai/playground/runs?limit=2", headers=reader)
        second = await pg.client.get(
            f"/admin/ai/playground/runs?limit=2&cursor={first.json()['next_cursor']}", headers=reader
        )
        one = await pg.client.get(f"/admin/ai/playground/runs/{ids[1]}", headers=reader)
        missing = await pg.client.get("/admin/ai/playground/runs/00000000-0000-4000-8000-000000000000", headers=reader)
        malformed = await pg.client.get("/admin/ai/playground/runs/not-a-run", headers=reader)
        bad_cursor = await pg.client.get("/admin/ai/playground/runs?cursor=zzz", headers=reader)
        too_many = await pg.client.get("/admin/ai/playground/runs?limit=201", headers=reader)
        unauthenticated = await pg.client.get("/admin/ai/playground/runs")

    assert [item["id"] for item in first.json()["items"]] == [ids[2], ids[1]]
    assert [item["id"] for item in second.json()["items"]] == [ids[0]]
    assert second.json()["next_cursor"] is None
    assert "steps" not in first.json()["items"][0]
    assert first.json()["items"][0]["final_text"] == "three" and first.json()["items"][0]["step_count"] == 0
    assert one.json()["final_text"] == "two" and one.json()["steps"] == []
    assert one.json()["prompt"] == "Run 1"
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "RUN_NOT_FOUND")
    assert (malformed.status_code, list(malformed.json()["error"]["details"]["fields"])) == (422, ["run_id"])
    assert (bad_cursor.status_code, list(bad_cursor.json()["error"]["details"]["fields"])) == (422, ["cursor"])
    assert (too_many.status_code, list(too_many.json()["error"]["details"]["fields"])) == (422, ["limit"])
    assert unauthenticated.status_code == 401
