"""Publishing task runs and heartbeats to Outrider's telemetry.

Task runs go to the JetStream stream with a message id of agent:task, and a
publish is retried with that same id until the stream acknowledges it (a NATS
server of a cluster going away, a stream leader moving): a retry of a run
that was stored after all is de-duplicated by the server rather than counted
twice. Heartbeats go on plain NATS: a heartbeat is worth
something only while it is fresh, and the next one replaces a lost one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from os import PathLike

from nats.aio.client import Client

from outrider.nats_access import ENGINE_INBOX_PREFIX, open_connection
from outrider.publishing import DEFAULT_RETRY, Retry, publish_once

TASK_SUBJECT = "telemetry.task"
HEARTBEAT_SUBJECT = "telemetry.agent"


def _instant(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a timezone")
    return value.astimezone(UTC).isoformat()


class TelemetryPublisher:
    """>>> publisher = await TelemetryPublisher.connect("nats://127.0.0.1:4222", user="engine", password=secret)
    >>> await publisher.task_run(agent_id="EXCEPTION_AGENT", task_id="t-1", task_type="stall_check",
    ...                          status="succeeded", started_at=t0, finished_at=t1)
    >>> await publisher.heartbeat(agent_id="EXCEPTION_AGENT", state="running")
    """

    def __init__(self, client: Client, *, retry: Retry = DEFAULT_RETRY) -> None:
        self._client = client
        self._js = client.jetstream()
        self._retry = retry

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str = "outrider-engine",
        user: str | None = None,
        password: str | None = None,
        tls_ca: str | PathLike[str] | None = None,
        timeout_s: float | None = None,
    ) -> TelemetryPublisher:
        """Connect with the engine credential (user and password); over TLS
        when the URL is `tls://` or `tls_ca` names the CA to verify the server
        with. Waits for an unreachable server (up to `timeout_s` when given)
        but raises CredentialRefused at once when the credential is refused."""
        return cls(
            await open_connection(
                url,
                name=name,
                user=user,
                password=password,
                tls_ca=tls_ca,
                inbox_prefix=ENGINE_INBOX_PREFIX,
                timeout=timeout_s,
            )
        )

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
            self._js, TASK_SUBJECT, json.dumps(body).encode(), msg_id=f"{agent_id}:{task_id}", retry=self._retry
        )

    async def heartbeat(self, *, agent_id: str, state: str, at: datetime | None = None) -> None:
        body = {"agent_id": agent_id, "state": state, "at": _instant(at or datetime.now(UTC))}
        await self._client.publish(HEARTBEAT_SUBJECT, json.dumps(body).encode())

    async def close(self) -> None:
        await self._client.drain()
