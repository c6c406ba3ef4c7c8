"""Replicated streams: the replication factor reaches every stream and bucket
created, a cluster's servers are all handed to the client, and a publish is
retried with one message id inside the stream's duplicate window."""

from __future__ import annotations

import nats.errors
import nats.js.errors
import pytest

from outrider.nats_access import servers, shown
from outrider.publishing import DEFAULT_RETRY, DUPLICATE_WINDOW_S, Retry, publish_once, retried
from services.common.nats import HEARTBEAT_BUCKET, STREAMS, StreamLimits, heartbeat_bucket, new_stream
from services.common.settings import SettingsError, load

SECRETS = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}
FAST = Retry(attempts=4, first_delay_s=0.001, max_delay_s=0.002, attempt_timeout_s=0.1)


def test_replicas_default_to_one_and_are_read_from_the_setting(tmp_path):
    assert load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)}).nats_replicas == 1
    three = load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_NATS_REPLICAS": "3"})
    assert three.nats_replicas == 3
    assert StreamLimits.of(three).replicas == 3


@pytest.mark.parametrize("raw", ["0", "6", "three"])
def test_a_replication_factor_nats_cannot_have_is_refused(tmp_path, raw):
    with pytest.raises(SettingsError, match="OUTRIDER_NATS_REPLICAS"):
        load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_NATS_REPLICAS": raw})


def test_every_stream_and_the_heartbeat_bucket_take_the_replication_factor():
    limits = StreamLimits(max_age_s=3600.0, max_bytes=2**20, replicas=3)
    for spec in STREAMS:
        config = new_stream(spec, limits)
        assert config.num_replicas == 3
        assert config.duplicate_window == DUPLICATE_WINDOW_S
    bucket = heartbeat_bucket(limits)
    assert (bucket.bucket, bucket.replicas) == (HEARTBEAT_BUCKET, 3)
    assert new_stream(STREAMS[0], StreamLimits(max_age_s=1.0, max_bytes=1)).num_replicas == 1


def test_a_cluster_url_lists_every_server_and_shows_none_of_the_passwords():
    url = "nats://u:secret@a:4222, nats://u:secret@b:4222,nats://c:4222"
    assert servers(url) == ["nats://u:secret@a:4222", "nats://u:secret@b:4222", "nats://c:4222"]
    assert shown(url) == "nats://a:4222,nats://b:4222,nats://c:4222"
    assert servers("nats://one:4222") == ["nats://one:4222"]


def test_every_retry_ends_inside_the_duplicate_window():
    assert DEFAULT_RETRY.longest_s() < DUPLICATE_WINDOW_S
    assert DEFAULT_RETRY.delays() == sorted(DEFAULT_RETRY.delays())
    assert max(DEFAULT_RETRY.delays()) == DEFAULT_RETRY.max_delay_s
    with pytest.raises(ValueError, match="duplicate window"):
        Retry(attempts=100, attempt_timeout_s=2.0)


async def test_transient_failures_are_retried_until_one_succeeds():
    failures = [TimeoutError(), nats.errors.NoRespondersError(), nats.js.errors.NoStreamResponseError()]
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if failures:
            raise failures.pop(0)
        return "stored"

    assert await retried(attempt, FAST) == "stored"
    assert calls == 4


async def test_the_last_transient_failure_is_raised_once_the_attempts_are_spent():
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise nats.errors.TimeoutError

    with pytest.raises(nats.errors.TimeoutError):
        await retried(attempt, FAST)
    assert calls == FAST.attempts


async def test_a_failure_that_repeats_on_every_attempt_is_not_retried():
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise nats.errors.ConnectionClosedError

    with pytest.raises(nats.errors.ConnectionClosedError):
        await retried(attempt, FAST)
    assert calls == 1


class RecordingJetStream:
    """Answers the first publish with a timeout, as when a server dies
    holding the acknowledgement, and records what each attempt carried."""

    def __init__(self) -> None:
        self.attempts: list[dict[str, str]] = []

    async def publish(self, subject, payload, *, timeout, headers):
        self.attempts.append(dict(headers))
        if len(self.attempts) == 1:
            raise nats.errors.TimeoutError
        return "ack"


async def test_every_attempt_of_a_publish_carries_the_same_message_id():
    js = RecordingJetStream()
    assert await publish_once(js, "telemetry.task", b"{}", msg_id="AGENT:t-1", retry=FAST) == "ack"
    assert [attempt["Nats-Msg-Id"] for attempt in js.attempts] == ["AGENT:t-1", "AGENT:t-1"]
    with pytest.raises(ValueError, match="message id"):
        await publish_once(js, "telemetry.task", b"{}", msg_id="", retry=FAST)
