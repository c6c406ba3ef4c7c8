"""NATS connection, the credentials it admits, and the JetStream streams and
KV buckets Outrider relies on.

Each engine key is also an NATS credential: the nkey derived from it
(outrider.engine_identity), allowed to publish only on the subjects that
carry its engine's name. The shared engine user of earlier versions keeps
the bare subjects, for the engine named `default`.

Every service that touches JetStream calls ensure_topology() at start: creating
what exists already is a no-op, so the order replicas start in never matters.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, KeyValueConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError

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
from services.common.errors import Unavailable
from services.common.settings import Settings, SettingsError

_log = logging.getLogger(__name__)

HEARTBEAT_TTL_S = 300


@dataclass(frozen=True, slots=True)
class StreamSpec:
    name: str
    subjects: tuple[str, ...]


STREAMS: tuple[StreamSpec, ...] = (
    # Task runs on the bare subject (the shared engine user) and on every
    # engine's own; telemetry.otlp carries the spans the gateway took in at
    # /v1/traces.
    StreamSpec("TELEMETRY", (*subject_forms(TASK_RUNS), "telemetry.otlp")),
    StreamSpec("FACTS", ("facts.>",)),
)
HEARTBEAT_BUCKET = "agent_heartbeats"


# The bare subjects an engine publishes on: its runs, its heartbeats and the
# facts of its subjects. The shared engine user publishes on them as they
# are, an engine with its own credential on them followed by its name
# (outrider.engine_identity). Either may subscribe only to its own reply
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

    @classmethod
    def of(cls, settings: Settings) -> StreamLimits:
        return cls(
            max_age_s=settings.stream_max_age_hours * 3600.0,
            max_bytes=settings.stream_max_mb * 2**20,
            replicas=settings.nats_replicas,
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
        storage=StorageType.FILE,
        max_age=limits.max_age_s,
        max_bytes=limits.max_bytes,
        discard=DiscardPolicy.NEW,
        num_replicas=limits.replicas,
        duplicate_window=DUPLICATE_WINDOW_S,
    )


def heartbeat_bucket(limits: StreamLimits) -> KeyValueConfig:
    return KeyValueConfig(
        bucket=HEARTBEAT_BUCKET, ttl=HEARTBEAT_TTL_S, storage=StorageType.FILE, history=1, replicas=limits.replicas
    )


def merged_stream(existing: StreamConfig, spec: StreamSpec) -> StreamConfig | None:
    """The existing stream with our subjects added, everything else as its operator set it;
    None when it already carries them."""
    missing = [subject for subject in spec.subjects if subject not in (existing.subjects or [])]
    if not missing:
        return None
    return replace(existing, subjects=[*(existing.subjects or []), *missing])


async def ensure_topology(js: JetStreamContext, limits: StreamLimits) -> None:
    """Create what is missing; never overwrite what an operator set.

    New streams and the heartbeat bucket are stored on `limits.replicas`
    servers. A stream that exists keeps its limits, retention and replicas even when
    they differ from this deployment's settings (an operator may have raised
    them by hand during an incident); only subjects it lacks are added.
    """
    for spec in STREAMS:
        try:
            info = await js.stream_info(spec.name)
        except NotFoundError:
            try:
                await js.add_stream(new_stream(spec, limits))
                continue
            except BadRequestError:
                # Another replica created it between the lookup and here.
                info = await js.stream_info(spec.name)
        merged = merged_stream(info.config, spec)
        if merged is not None:
            await js.update_stream(merged)
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
