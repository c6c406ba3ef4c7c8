"""NATS connection, the credentials it admits, and the JetStream streams and
KV buckets Outrider relies on.

Each engine key is also an NATS credential: the nkey derived from it
(outrider.engine_identity), allowed to publish only on the subjects that
carry its engine's name. The shared engine user of earlier versions keeps
the bare subjects, for the engine named `default`.

Every service that touches JetStream calls ensure_topology() at start: creating
what exists already is a no-op, so the order replicas start in never matters.

Both streams are work queues: each subject is read by exactly one durable
consumer, shared by every replica of its context, and a message leaves the
stream once that consumer acknowledges (or terminates) it. So a stream holds
what is still owed, not a week of what was taken, and its limits are a
backstop for a consumer that is away rather than the stream's everyday size.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, KeyValueConfig, RetentionPolicy, StorageType, StreamConfig, StreamInfo
from nats.js.errors import BadRequestError, BucketNotFoundError, KeyWrongLastSequenceError, NotFoundError

from outrider.engine_identity import (
    BOOKING_FACTS,
    HEARTBEATS,
    LEGACY_SUBJECTS,
    TASK_RUNS,
    EngineSubjects,
    public_nkey,
    subject_forms,
    subjects_of,
)
from outrider.nats_access import CredentialRefused, open_connection, shown
from outrider.publishing import DUPLICATE_WINDOW_S
from services.common import stream_state
from services.common.errors import Unavailable
from services.common.settings import DEFAULT_STREAM_MAX_MSGS_PER_SUBJECT, Settings, SettingsError

_log = logging.getLogger(__name__)

HEARTBEAT_TTL_S = 300


@dataclass(frozen=True, slots=True)
class StreamSpec:
    name: str
    # Only subjects a consumer reads: a work queue keeps what nobody reads
    # until its limits, so a subject stored for nobody fills the stream.
    subjects: tuple[str, ...]
    # The largest message stored; a larger one is refused to its publisher,
    # which is told, rather than stored and terminated by the consumer.
    max_message_bytes: int
    # Subjects earlier releases stored here that no consumer reads: a start
    # takes them off an existing stream.
    retired: tuple[str, ...] = ()


STREAMS: tuple[StreamSpec, ...] = (
    # Task runs on the bare subject (the shared engine user) and on every
    # engine's own; telemetry.otlp carries the spans the gateway took in at
    # /v1/traces, in messages of about 256 KiB (a run is at most 64 KiB).
    StreamSpec("TELEMETRY", (*subject_forms(TASK_RUNS), "telemetry.otlp"), max_message_bytes=2**20),
    # One subject per fact kind a consumer merges (booking is the only one),
    # bare and per engine. A fact event is at most 16 KiB; one a few times
    # larger still reaches the consumer, which counts it as a rejection the
    # operator can see.
    StreamSpec("FACTS", subject_forms(BOOKING_FACTS), max_message_bytes=256 * 2**10, retired=("facts.>",)),
)
HEARTBEAT_BUCKET = "agent_heartbeats"


# The bare subjects an engine publishes on: its runs, its heartbeats and the
# facts of its subjects, each a subject a consumer reads, so an engine cannot
# store what nobody takes out again. The shared engine user publishes on them
# as they are, an engine with its own credential on them followed by its
# name (outrider.engine_identity). Either may subscribe only to its own reply
# inboxes (for JetStream's acknowledgements), so it can neither read the
# streams nor call the JetStream API that creates, deletes or consumes them
# ($JS.API.>), nor touch the heartbeat bucket ($KV.>); the services'
# credential does all that.
ENGINE_PUBLISHES: tuple[str, ...] = (TASK_RUNS, HEARTBEATS, BOOKING_FACTS)


@dataclass(frozen=True, slots=True)
class NatsUser:
    name: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class EngineNkey:
    """One engine key's NATS credential, as the server lists it: the public
    nkey, and the engine whose subjects it may publish on."""

    engine: str
    public_key: str


def engine_permissions(subjects: EngineSubjects) -> dict[str, object]:
    return {
        "publish": {"allow": list(subjects.publishes)},
        "subscribe": {"allow": [f"{subjects.inbox_prefix}.>"]},
    }


def authorization(service: NatsUser, engine: NatsUser | None, engines: Iterable[EngineNkey] = ()) -> dict[str, object]:
    """nats-server's `authorization` block: the services' user unrestricted;
    the shared engine user (when there is one) held to the bare subjects and
    its inboxes; each engine key's nkey held to its engine's own."""
    users: list[dict[str, object]] = [{"user": service.name, "password": service.password}]
    if engine is not None:
        users.append(
            {"user": engine.name, "password": engine.password, "permissions": engine_permissions(LEGACY_SUBJECTS)}
        )
    users += [
        {"nkey": nkey.public_key, "permissions": engine_permissions(subjects_of(nkey.engine))} for nkey in engines
    ]
    return {"users": users}


def engine_nkeys(settings: Settings) -> list[EngineNkey]:
    """The credential of every configured engine key, a previous key during
    a rollover included. Two engines configured with one key share one
    credential, and the server lists it once, for the first engine named:
    the engine that key names over gRPC too (callers.engine_named)."""
    listed: dict[str, EngineNkey] = {}
    for engine, keys in settings.engine_keys.items():
        for key in keys:
            public = public_nkey(key)
            listed.setdefault(public, EngineNkey(engine, public))
    return list(listed.values())


def service_user(settings: Settings) -> NatsUser:
    return NatsUser(settings.nats_user, settings.nats_password)


def engine_user(settings: Settings) -> NatsUser:
    if not settings.nats_engine_password:
        raise SettingsError("OUTRIDER_NATS_ENGINE_PASSWORD is not set: the embedded NATS admits engines with it")
    return NatsUser(settings.nats_engine_user, settings.nats_engine_password)


# How the configuration `outrider nats-authorization` prints names the
# passwords: variables of the server's environment, as the settings call them,
# so the block holds no secret and the server reads the same values the
# platform does.
_PASSWORD_VARIABLES = ("OUTRIDER_NATS_PASSWORD", "OUTRIDER_NATS_ENGINE_PASSWORD")


def authorization_conf(settings: Settings, *, shared_user: bool = True) -> str:
    """The `authorization` block an external nats-server needs, in its own
    configuration format: every engine key's nkey (a comment names its
    engine), the services' user and, unless `shared_user` is False, the
    shared engine user; the passwords as `$OUTRIDER_NATS_…` references."""
    service_variable, engine_variable = _PASSWORD_VARIABLES
    nkeys = engine_nkeys(settings)
    block = authorization(
        NatsUser(settings.nats_user, f"${service_variable}"),
        NatsUser(settings.nats_engine_user, f"${engine_variable}") if shared_user else None,
        nkeys,
    )
    text = json.dumps(block, indent=2)
    for variable in _PASSWORD_VARIABLES:
        text = text.replace(f'"${variable}"', f"${variable}")
    engines = {nkey.public_key: nkey.engine for nkey in nkeys}
    text = re.sub(
        r'"nkey": "(U[A-Z2-7]+)",', lambda found: f"{found.group(0)}  # engine {engines[found.group(1)]}", text
    )
    return f"authorization: {text}\n"


async def connect(
    url: str,
    *,
    name: str,
    user: str | None = None,
    password: str | None = None,
    tls_ca: Path | None = None,
    timeout: float = 10.0,
) -> Client:
    """Connect, or fail with the setting and address named instead of retrying forever."""
    try:
        return await open_connection(url, name=name, user=user, password=password, tls_ca=tls_ca, timeout=timeout)
    except CredentialRefused as exc:
        raise Unavailable(
            f"{exc}: check OUTRIDER_NATS_USER and OUTRIDER_NATS_PASSWORD", code="NATS_CREDENTIALS_REFUSED"
        ) from exc
    except TimeoutError as exc:
        raise Unavailable(f"NATS_URL is unreachable: {exc}", code="NATS_UNREACHABLE") from exc
    except Exception as exc:
        raise Unavailable(
            f"NATS_URL is unreachable at {shown(url)}: {type(exc).__name__}: {exc}", code="NATS_UNREACHABLE"
        ) from exc


async def connect_service(settings: Settings, *, name: str, timeout: float = 10.0) -> Client:
    """The services' connection: their own credential, TLS as the settings say."""
    if not settings.nats_url:
        raise SettingsError("NATS_URL is not set (outrider up provides the embedded one)")
    return await connect(
        settings.nats_url,
        name=name,
        user=settings.nats_user,
        password=settings.nats_password,
        tls_ca=settings.nats_tls_ca,
        timeout=timeout,
    )


async def warn_if_open(settings: Settings) -> bool:
    """Say loudly when the NATS server also admits a connection without
    credentials: then anyone who reaches it can publish facts and steer
    verdicts, whatever our own credential. Returns whether it did."""
    if not settings.nats_url:
        return False
    try:
        client = await open_connection(
            shown(settings.nats_url), name="outrider-open-probe", tls_ca=settings.nats_tls_ca, timeout=3.0
        )
    except Exception:  # noqa: BLE001 - refused (as it should be) or unreachable: nothing to warn of
        return False
    await client.close()
    _log.error(
        "NATS accepts connections without credentials: anyone who reaches it can publish facts and"
        " telemetry; configure users on the server (see README, NATS credentials)",
        extra={"nats_url": shown(settings.nats_url)},
    )
    return True


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much a stream keeps while its consumer is behind or away, and on
    how many servers of the cluster it is stored."""

    max_age_s: float
    max_bytes: int
    replicas: int = 1
    # Per subject, so that a flood on one subject is refused on that subject
    # alone while the stream still has room for the others.
    max_msgs_per_subject: int = DEFAULT_STREAM_MAX_MSGS_PER_SUBJECT

    @classmethod
    def of(cls, settings: Settings) -> StreamLimits:
        return cls(
            max_age_s=settings.stream_max_age_hours * 3600.0,
            max_bytes=settings.stream_max_mb * 2**20,
            replicas=settings.nats_replicas,
            max_msgs_per_subject=settings.stream_max_msgs_per_subject,
        )


def new_stream(spec: StreamSpec, limits: StreamLimits) -> StreamConfig:
    # Full means refuse new events, not drop old ones: a publisher that is
    # refused knows and can retry; an event dropped from the back is lost
    # without anyone being told. The duplicate window is stated rather than
    # left to the server's default: publishers size their retries to it.
    # The durable consumers inherit the stream's replicas (they set none), so
    # their positions survive the loss of a server as the messages do.
    return StreamConfig(
        name=spec.name,
        subjects=list(spec.subjects),
        retention=RetentionPolicy.WORK_QUEUE,
        storage=StorageType.FILE,
        max_age=limits.max_age_s,
        max_bytes=limits.max_bytes,
        max_msgs_per_subject=limits.max_msgs_per_subject,
        max_msg_size=spec.max_message_bytes,
        discard=DiscardPolicy.NEW,
        discard_new_per_subject=True,
        num_replicas=limits.replicas,
        duplicate_window=DUPLICATE_WINDOW_S,
    )


def heartbeat_bucket(limits: StreamLimits) -> KeyValueConfig:
    return KeyValueConfig(
        bucket=HEARTBEAT_BUCKET, ttl=HEARTBEAT_TTL_S, storage=StorageType.FILE, history=1, replicas=limits.replicas
    )


def stream_subjects(existing: StreamConfig, spec: StreamSpec) -> list[str]:
    """An existing stream's subjects with ours added and the ones we retired
    (and a stopped migration's stand-in) taken off; an operator's stay."""
    kept = [
        subject
        for subject in existing.subjects or []
        if subject not in spec.retired and not subject.startswith(_MIGRATING_PREFIX)
    ]
    return [*kept, *(subject for subject in spec.subjects if subject not in kept)]


def merged_stream(existing: StreamConfig, spec: StreamSpec) -> StreamConfig | None:
    """The existing stream with our subjects as they are now, everything else
    as its operator set it; None when it already carries exactly them."""
    subjects = stream_subjects(existing, spec)
    if subjects == list(existing.subjects or []):
        return None
    return replace(existing, subjects=subjects)


def migrated_stream(existing: StreamConfig, spec: StreamSpec, limits: StreamLimits) -> StreamConfig:
    """The work-queue stream that replaces an old one: the limits an operator
    set on it are kept, the backstops it never had are added."""
    per_subject = existing.max_msgs_per_subject or -1
    message_bytes = existing.max_msg_size or -1
    refuses = existing.discard == DiscardPolicy.NEW
    return replace(
        existing,
        subjects=stream_subjects(existing, spec),
        retention=RetentionPolicy.WORK_QUEUE,
        # A per-subject cap on a stream that drops its oldest messages when
        # full would drop unconsumed events silently; only one that refuses
        # gets it.
        max_msgs_per_subject=per_subject if per_subject > 0 or not refuses else limits.max_msgs_per_subject,
        discard_new_per_subject=refuses,
        max_msg_size=message_bytes if message_bytes > 0 else spec.max_message_bytes,
    )


# While a stream is checked a last time before it is recreated, it listens
# on this prefix and its name instead of its subjects: nothing is stored in
# a stream about to go, and a publisher meanwhile is told no stream answers
# (and retries) instead of being acknowledged for a message then deleted.
_MIGRATING_PREFIX = "outrider.migrating."
# The bucket whose keys say which replica is changing which stream.
TOPOLOGY_BUCKET = "outrider_topology"
# Longest a replica may hold a stream's migration; far more than it takes (a
# drain, two API calls). One that died holding it releases it by expiry.
_LOCK_TTL_S = 30.0
_LOCK_POLL_S = 0.2
# How long a stream is watched for a moment when its consumers are all
# reading or caught up: one between two pulls has messages waiting and no
# pull open, which is no backlog.
_LOOK_S = 1.0
# How long deliveries in flight may take to settle once no new message
# arrives. Publishers are refused meanwhile and retry, so it stays short.
_DRAIN_S = 3.0
_POLL_S = 0.1


async def ensure_topology(js: JetStreamContext, limits: StreamLimits) -> None:
    """Create what is missing; never overwrite what an operator set.

    New streams and the heartbeat bucket are stored on `limits.replicas`
    servers. A stream that exists keeps its limits and replicas even when
    they differ from this deployment's settings (an operator may have raised
    them by hand during an incident); its subjects become ours (plus any
    the operator added). A stream an earlier release made with limits
    retention is recreated as a work queue when nothing in it is still owed
    (see migrate_stream).
    """
    for spec in STREAMS:
        info = await _stream_or_created(js, spec, limits)
        if info is None:
            continue
        if info.config.retention == RetentionPolicy.WORK_QUEUE:
            info = await _with_our_subjects(js, info, spec)
        else:
            # It changes the subjects itself when it leaves the stream as it is.
            info = await migrate_stream(js, spec, limits)
            if info is None:
                continue
        kept = info.config
        if (kept.max_age, kept.max_bytes, kept.num_replicas or 1) != (
            limits.max_age_s,
            limits.max_bytes,
            limits.replicas,
        ):
            _log.info(
                "stream keeps the limits it has",
                extra={
                    "stream": spec.name,
                    "max_age_s": kept.max_age,
                    "max_bytes": kept.max_bytes,
                    "replicas": kept.num_replicas,
                    "configured_max_age_s": limits.max_age_s,
                    "configured_max_bytes": limits.max_bytes,
                    "configured_replicas": limits.replicas,
                },
            )
    try:
        await js.key_value(HEARTBEAT_BUCKET)
    except BucketNotFoundError:
        await js.create_key_value(heartbeat_bucket(limits))


async def _stream_or_created(js: JetStreamContext, spec: StreamSpec, limits: StreamLimits) -> StreamInfo | None:
    """The stream as it is, or None when it did not exist and was created now."""
    try:
        return await js.stream_info(spec.name)
    except NotFoundError:
        try:
            await js.add_stream(new_stream(spec, limits))
            return None
        except BadRequestError:
            # Another replica created it between the lookup and here.
            return await js.stream_info(spec.name)


async def migrate_stream(js: JetStreamContext, spec: StreamSpec, limits: StreamLimits) -> StreamInfo | None:
    """Recreate a limits-retention stream as a work queue, if nothing in it is owed.

    NATS cannot change a stream's retention in place, so the stream is
    deleted and made again, and its durable consumers with it: each context
    makes its own again (at start, or when its next pull is refused). Only
    one replica at a time does this; the others wait for it and then find the
    new stream. A stream that still owes messages is left as it is, said so
    at error level, and taken on by a later start once its consumers caught
    up. Returns the stream still in place, or None once it was recreated.
    """
    async with _migration_lock(js, limits, spec.name) as held:
        info = await _stream_or_created(js, spec, limits)
        if info is None or info.config.retention == RetentionPolicy.WORK_QUEUE or not held:
            return info
        # Its subjects change under the lock too: a replica putting them back
        # while another drains the stream would let a message in just
        # before the stream goes.
        state = await _polled(js, spec, lambda seen: _settles_soon(seen, spec), _LOOK_S)
        if not _settles_soon(state, spec):
            _say_owed(spec, _owed(state, spec))
            return await _with_our_subjects(js, info, spec)
        await js.update_stream(replace(info.config, subjects=[_MIGRATING_PREFIX + spec.name]))
        state = await _polled(js, spec, lambda seen: not _owed(seen, spec), _DRAIN_S)
        still_owed = _owed(state, spec)
        if still_owed:
            _say_owed(spec, still_owed)
            return await js.update_stream(merged_stream(info.config, spec) or info.config)
        await js.delete_stream(spec.name)
        await js.add_stream(migrated_stream(info.config, spec, limits))
    _log.warning(
        "stream recreated with work-queue retention: acknowledged messages no longer stay in it",
        extra={"stream": spec.name, "messages_dropped": state.messages, "bytes_dropped": state.bytes},
    )
    return None


async def _with_our_subjects(js: JetStreamContext, info: StreamInfo, spec: StreamSpec) -> StreamInfo:
    merged = merged_stream(info.config, spec)
    return info if merged is None else await js.update_stream(merged)


def _owed(state: stream_state.StreamState, spec: StreamSpec) -> list[str]:
    return stream_state.owed(state, ours=spec.subjects, retired=spec.retired)


def _settles_soon(state: stream_state.StreamState, spec: StreamSpec) -> bool:
    return stream_state.settles_soon(state, ours=spec.subjects, retired=spec.retired)


async def _polled(
    js: JetStreamContext, spec: StreamSpec, enough: Callable[[stream_state.StreamState], bool], wait_s: float
) -> stream_state.StreamState:
    """The stream's state once `enough` holds for it, or as it is after `wait_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        state = await stream_state.read_stream(js, spec.name)
        if enough(state) or loop.time() >= deadline:
            return state
        await asyncio.sleep(_POLL_S)


def _say_owed(spec: StreamSpec, owed: list[str]) -> None:
    _log.error(
        "stream keeps limits retention for now: it still owes messages to its consumers, so acknowledged"
        " ones stay in it and fill it; a start after they caught up makes it a work queue",
        extra={"stream": spec.name, "owed": owed},
    )


@asynccontextmanager
async def _migration_lock(js: JetStreamContext, limits: StreamLimits, stream: str) -> AsyncIterator[bool]:
    """Hold the right to recreate `stream` for the block; yields False when
    the replica holding it never let go, and then nothing may be changed.

    A key created only if absent is the lock: two replicas recreating one
    stream at once could each delete the stream the other just made, with
    what was published to it in between.
    """
    try:
        bucket = await js.key_value(TOPOLOGY_BUCKET)
    except BucketNotFoundError:
        bucket = await js.create_key_value(
            KeyValueConfig(
                bucket=TOPOLOGY_BUCKET,
                ttl=_LOCK_TTL_S,
                storage=StorageType.FILE,
                history=1,
                replicas=limits.replicas,
            )
        )
    key = f"migrating.{stream}"
    loop = asyncio.get_running_loop()
    # Past the expiry of a lock taken just before this replica asked, and
    # the server's sweep of expired keys.
    deadline = loop.time() + 2 * _LOCK_TTL_S
    while True:
        try:
            await bucket.create(key, b"")
            break
        except KeyWrongLastSequenceError:
            if loop.time() >= deadline:
                _log.error("another replica holds the stream's migration and never let go", extra={"stream": stream})
                yield False
                return
            await asyncio.sleep(_LOCK_POLL_S)
    try:
        yield True
    finally:
        try:
            await bucket.delete(key)
        except Exception:  # noqa: BLE001 - the key expires on its own; the next migration waits for that
            _log.warning("stream migration lock not released; it expires", extra={"stream": stream})
