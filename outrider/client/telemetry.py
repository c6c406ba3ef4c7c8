"""Publishing task runs, heartbeats and booking facts to Outrider.

An engine connects with its own name and engine key: the NATS credential is
derived from the key (outrider.engine_identity), and everything it publishes
goes on the subjects that carry its name, the only ones that credential may
publish on. The shared `engine` user and password of earlier versions still
connect, for the engine named `default`, on the bare subjects.

Task runs go to the JetStream stream with a message id of agent:task, and a
publish is retried with that same id until the stream acknowledges it (a NATS
server of a cluster going away, a stream leader moving): a retry of a run
that was stored after all is de-duplicated by the server rather than counted
twice. Heartbeats go on plain NATS: a heartbeat is worth
something only while it is fresh, and the next one replaces a lost one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from os import PathLike

from nats.aio.client import Client
from nats.js.api import PubAck

from outrider.engine_identity import LEGACY_SUBJECTS, EngineSubjects, nkey_seed, subjects_of
from outrider.nats_access import open_connection
from outrider.publishing import DEFAULT_RETRY, Retry, publish_once


def _instant(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a timezone")
    return value.astimezone(UTC).isoformat()


class TelemetryPublisher:
    """>>> publisher = await TelemetryPublisher.connect("nats://127.0.0.1:4222", engine="dispatch", key=engine_key)
    >>> await publisher.task_run(agent_id="DISPATCH_AGENT", task_id="t-1", task_type="assign",
    ...                          status="succeeded", started_at=t0, finished_at=t1)
    >>> await publisher.heartbeat(agent_id="DISPATCH_AGENT", state="running")
    """

    def __init__(
        self, client: Client, *, subjects: EngineSubjects = LEGACY_SUBJECTS, retry: Retry = DEFAULT_RETRY
    ) -> None:
        self._client = client
        self._js = client.jetstream()
        self._retry = retry
        self.subjects = subjects

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        engine: str | None = None,
        key: str | None = None,
        name: str = "outrider-engine",
        user: str | None = None,
        password: str | None = None,
        tls_ca: str | PathLike[str] | None = None,
        timeout_s: float | None = None,
    ) -> TelemetryPublisher:
        """Connect as the engine named `engine` with its engine `key` (the
        NATS credential is derived from it), or with the shared `user` and
        `password` of the engine named `default`; over TLS when the URL is
        `tls://` or `tls_ca` names the CA to verify the server with. Waits
        for an unreachable server (up to `timeout_s` when given) but raises
        CredentialRefused at once when the credential is refused."""
        if (engine is None) != (key is None):
            raise ValueError("an engine connects with its name and its key together")
        if engine is not None and user is not None:
            raise ValueError("connect with an engine and its key, or with a user and password, not both")
        subjects = LEGACY_SUBJECTS if engine is None else subjects_of(engine)
        client = await open_connection(
            url,
            name=name,
            user=user,
            password=password,
            nkey_seed=None if key is None else nkey_seed(key),
            tls_ca=tls_ca,
            inbox_prefix=subjects.inbox_prefix,
            timeout=timeout_s,
        )
        return cls(client, subjects=subjects)

    async def task_run(
        self,
        *,
        agent_id: str,
        task_id: str,
        task_type: str,
        status: str,
        started_at: datetime,
        finished_at: datetime,
        error: str | None = None,
    ) -> None:
        """Publish one finished run; raises when JetStream has not acknowledged
        it after every retry."""
        if status not in ("succeeded", "failed"):
            raise ValueError(f"status must be succeeded or failed, got {status!r}")
        body = {
            "agent_id": agent_id,
            "task_id": task_id,
            "task_type": task_type,
            "status": status,
            "started_at": _instant(started_at),
            "finished_at": _instant(finished_at),
        }
        if error:
            body["error"] = error
        await publish_once(
            self._js,
            self.subjects.task_runs,
            json.dumps(body).encode(),
            msg_id=f"{agent_id}:{task_id}",
            retry=self._retry,
        )

    async def heartbeat(self, *, agent_id: str, state: str, at: datetime | None = None) -> None:
        body = {"agent_id": agent_id, "state": state, "at": _instant(at or datetime.now(UTC))}
        await self._client.publish(self.subjects.heartbeats, json.dumps(body).encode())

    async def booking_facts(self, facts: Mapping[str, object], *, msg_id: str) -> PubAck:
        """Publish one `facts.booking` event (`subject_id`, `at` and what
        changed) until the stream acknowledges it; `msg_id` names the
        observation (subject and instant, say), so a retry is stored once."""
        return await publish_once(
            self._js, self.subjects.booking_facts, json.dumps(facts).encode(), msg_id=msg_id, retry=self._retry
        )

    async def close(self) -> None:
        await self._client.drain()
