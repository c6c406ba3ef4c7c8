"""The engine's view of the registry: switches, thresholds, autonomy and models.

An engine asks this client, never the network, when it needs a setting: the
accessors answer from memory and never block. Behind them the client keeps
one snapshot of the registry current:

* it watches the registry (WatchSnapshot), so a change made in the console
  reaches the engine within about a second;
* when the watch breaks it polls GetSnapshot with a growing, jittered
  backoff, and goes back to watching as soon as the registry answers;
* through any outage it keeps the last good snapshot, in memory and, given
  `cache_path`, on disk, so an engine restarting while the registry is down
  still obeys the operator's last decisions rather than its old defaults.
  Falling back to defaults mid-shift would flip autonomy or re-enable a
  skill someone switched off, with nobody told.

`defaults` (usually the engine's old environment flags) apply only until the
first snapshot loads, from the registry or from disk. After that the
registry is the only source: a skill or agent it does not list is off, not
defaulted.

This module needs only grpcio, protobuf and the standard library.

Example::

    client = RegistryClient("registry:50051", internal_key, cache_path="/var/lib/engine/registry.json",
                            defaults=RegistryDefaults(autonomy={"EXCEPTION_AGENT": False}))
    await client.start()
    if client.skill_enabled("stall_response"):
        minutes = client.threshold("stall_response", "stallMinutes")

During a guarded rollout (DESIGN §9) the settings depend on the subject:
ask for them per decision, and obey what comes back::

    settings = client.for_subject("EXCEPTION_AGENT", "stall_response", booking_id)
    minutes = settings.threshold("stall_response", "stallMinutes")
    model = settings.model
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Final, Literal

import grpc

from outrider.client.rollouts import Assignment, RolloutSettings
from outrider.errors import OutriderError, refusal
from outrider.rpc import TlsFiles, keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc

_log = logging.getLogger(__name__)

Number = int | float
Source = Literal["defaults", "disk", "registry"]

# The only document format this client understands; a newer registry that
# changes the shape bumps it, and the client keeps its last good copy.
SUPPORTED_FORMAT: Final = 1
_CACHE_VERSION: Final = 1


class SnapshotFormatError(OutriderError, ValueError):
    """A snapshot document this client cannot read; the previous snapshot stays in force."""

    def __init__(self, message: str) -> None:
        super().__init__("SNAPSHOT_UNREADABLE", message)


class UnknownThreshold(OutriderError, LookupError):
    """Neither the snapshot nor the defaults hold this threshold.

    Raised rather than answered with a guess: an invented number in a
    decision rule is worse than a loud failure at start-up.
    """

    def __init__(self, message: str) -> None:
        super().__init__("UNKNOWN_THRESHOLD", message)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    runtime: str
    status: str
    has_autonomy_gate: bool
    autonomous: bool
    model: str | None


@dataclass(frozen=True, slots=True)
class SkillSettings:
    agent_id: str
    source: str
    enabled: bool
    thresholds: Mapping[str, Number]
    tool_names: tuple[str, ...]
    version: int


@dataclass(frozen=True, slots=True)
class ToolSettings:
    kind: str
    executor: str
    owner_agents: tuple[str, ...]
    requires_confirmation: bool
    requires_confirmation_by_agent: Mapping[str, bool]


@dataclass(frozen=True, slots=True)
class SubjectSettings:
    """What an engine obeys for one decision about one subject: the agent's
    model and autonomy, its skills' switches and thresholds, and which tools
    wait for a human, with the candidate's change applied when the subject
    is in a rollout's candidate arm. `assignment` is None outside a rollout.
    """

    agent_id: str
    model: str | None
    autonomous: bool
    # The agent's skills.
    skills: Mapping[str, SkillSettings]
    # Per tool name: must a human confirm its use? A tool not listed must.
    confirmations: Mapping[str, bool]
    assignment: Assignment | None = None

    def skill_enabled(self, skill_id: str) -> bool:
        skill = self.skills.get(skill_id)
        return skill is not None and skill.enabled

    def threshold(self, skill_id: str, key: str) -> Number:
        return _threshold(self.skills, skill_id, key)

    def requires_confirmation(self, tool_name: str) -> bool:
        return self.confirmations.get(tool_name, True)

    def assigned(self, assignment: Assignment | None) -> SubjectSettings:
        return replace(self, assignment=assignment)


def with_change(
    base: SubjectSettings, change: Mapping[str, Any], tool_kinds: Mapping[str, str], assignment: Assignment
) -> SubjectSettings:
    """The candidate arm's settings: `base` with the rollout's change applied.

    Autonomy decides which tools wait for a human, so a change of autonomy
    recomputes that for every tool (a read never waits).
    """
    settings = base.assigned(assignment)
    if "skill_id" in change:
        skill_id = str(change["skill_id"])
        skill = settings.skills.get(skill_id)
        if skill is None:
            return settings
        changed = replace(
            skill,
            enabled=bool(change.get("enabled", skill.enabled)),
            thresholds=MappingProxyType({**skill.thresholds, **change.get("thresholds", {})}),
        )
        return replace(settings, skills=MappingProxyType({**settings.skills, skill_id: changed}))
    if "model" in change:
        model = change["model"]
        return replace(settings, model=model if isinstance(model, str) and model else None)
    if "autonomous" in change:
        autonomous = bool(change["autonomous"])
        confirmations = {name: tool_kinds.get(name) != "read" and not autonomous for name in settings.confirmations}
        return replace(settings, autonomous=autonomous, confirmations=MappingProxyType(confirmations))
    return settings


def _threshold(skills: Mapping[str, SkillSettings], skill_id: str, key: str) -> Number:
    skill = skills.get(skill_id)
    if skill is None or key not in skill.thresholds:
        raise UnknownThreshold(f"the registry has no threshold {key!r} for skill {skill_id!r}")
    return skill.thresholds[key]


@dataclass(frozen=True, slots=True)
class RegistrySnapshot:
    """One version of the registry as the engine reads it, named by its etag."""

    etag: str
    agents: Mapping[str, AgentSettings]
    skills: Mapping[str, SkillSettings]
    tools: Mapping[str, ToolSettings]
    document: bytes = field(repr=False)
    # Running and paused rollouts by (agent id, decision type).
    rollouts: Mapping[tuple[str, str], RolloutSettings] = field(default_factory=lambda: MappingProxyType({}))
    # The settings of each agent, and of each arm of each rollout, built the
    # first time a subject asks: every later subject shares them.
    _views: dict[str, SubjectSettings] = field(default_factory=dict, repr=False, compare=False)
    _arm_views: dict[tuple[str, int], SubjectSettings] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, etag: str, document: bytes) -> RegistrySnapshot:
        """Read a snapshot document; raises SnapshotFormatError for anything malformed."""
        try:
            raw = json.loads(document)
            if raw.get("format") != SUPPORTED_FORMAT:
                raise SnapshotFormatError(f"snapshot format {raw.get('format')!r} is not {SUPPORTED_FORMAT}")
            agents = {
                agent_id: AgentSettings(
                    runtime=str(entry["runtime"]),
                    status=str(entry["status"]),
                    has_autonomy_gate=_flag(entry["has_autonomy_gate"]),
                    autonomous=_flag(entry["autonomous"]),
                    model=entry["model"] if isinstance(entry["model"], str) and entry["model"] else None,
                )
                for agent_id, entry in raw["agents"].items()
            }
            skills = {
                skill_id: SkillSettings(
                    agent_id=str(entry["agent_id"]),
                    source=str(entry["source"]),
                    enabled=_flag(entry["enabled"]),
                    thresholds=MappingProxyType({str(k): _number(v) for k, v in entry["thresholds"].items()}),
                    tool_names=tuple(str(name) for name in entry["tool_names"]),
                    version=int(entry["version"]),
                )
                for skill_id, entry in raw["skills"].items()
            }
            tools = {
                name: ToolSettings(
                    kind=str(entry["kind"]),
                    executor=str(entry["executor"]),
                    owner_agents=tuple(str(agent) for agent in entry["owner_agents"]),
                    requires_confirmation=_flag(entry["requires_confirmation"]),
                    requires_confirmation_by_agent=MappingProxyType(
                        {str(k): _flag(v) for k, v in entry["requires_confirmation_by_agent"].items()}
                    ),
                )
                for name, entry in raw["tools"].items()
            }
            # Absent from a registry with no rollout in progress (and from
            # every registry older than rollouts).
            rollouts = {
                (str(entry["agent_id"]), str(entry["decision_type"])): RolloutSettings(
                    id=str(entry["id"]),
                    agent_id=str(entry["agent_id"]),
                    decision_type=str(entry["decision_type"]),
                    percent=_number(entry["percent"]),
                    change=MappingProxyType(dict(entry["change"])),
                )
                for entry in raw.get("rollouts", ())
            }
        except SnapshotFormatError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise SnapshotFormatError(f"unreadable snapshot document: {type(error).__name__}: {error}") from None
        return cls(
            etag=etag,
            agents=MappingProxyType(agents),
            skills=MappingProxyType(skills),
            tools=MappingProxyType(tools),
            document=bytes(document),
            rollouts=MappingProxyType(rollouts),
        )

    def skill_enabled(self, skill_id: str) -> bool:
        skill = self.skills.get(skill_id)
        return skill is not None and skill.enabled

    def threshold(self, skill_id: str, key: str) -> Number:
        return _threshold(self.skills, skill_id, key)

    def autonomous(self, agent_id: str) -> bool:
        agent = self.agents.get(agent_id)
        return agent is not None and agent.autonomous

    def model(self, agent_id: str) -> str | None:
        agent = self.agents.get(agent_id)
        return agent.model if agent is not None else None

    def requires_confirmation(self, agent_id: str, tool_name: str) -> bool:
        tool = self.tools.get(tool_name)
        if tool is None:
            return True
        if agent_id in tool.requires_confirmation_by_agent:
            return tool.requires_confirmation_by_agent[agent_id]
        # An agent whose skills do not list the tool has no say in the
        # snapshot; only a read is safe without a human.
        return tool.kind != "read"

    def assignment(self, agent_id: str, decision_type: str, subject_id: str) -> Assignment | None:
        """The arm of the agent's rollout for this decision type the subject is in; None outside a rollout."""
        rollout = self.rollouts.get((agent_id, decision_type))
        return None if rollout is None else rollout.assign(subject_id)

    def for_subject(self, agent_id: str, decision_type: str, subject_id: str) -> SubjectSettings:
        """The settings one decision about `subject_id` obeys, and its arm.

        No call is made: the arm follows from the rollout in this snapshot
        (outrider.client.rollouts), and the settings of each arm are built
        once per snapshot.
        """
        rollout = self.rollouts.get((agent_id, decision_type))
        if rollout is None:
            return self._agent_view(agent_id)
        key = (rollout.id, rollout.arm_index(subject_id))
        view = self._arm_views.get(key)
        if view is None:
            assignment = rollout.assign(subject_id)
            base = self._agent_view(agent_id)
            if assignment.arm == "candidate":
                kinds = {name: tool.kind for name, tool in self.tools.items()}
                view = with_change(base, rollout.change, kinds, assignment)
            else:
                view = base.assigned(assignment)
            self._arm_views[key] = view
        return view

    def _agent_view(self, agent_id: str) -> SubjectSettings:
        view = self._views.get(agent_id)
        if view is None:
            agent = self.agents.get(agent_id)
            view = SubjectSettings(
                agent_id=agent_id,
                model=agent.model if agent is not None else None,
                autonomous=agent is not None and agent.autonomous,
                skills=MappingProxyType(
                    {skill_id: skill for skill_id, skill in self.skills.items() if skill.agent_id == agent_id}
                ),
                confirmations=MappingProxyType(
                    {name: self.requires_confirmation(agent_id, name) for name in self.tools}
                ),
            )
            self._views[agent_id] = view
        return view


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _number(value: Any) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class RegistryDefaults:
    """What the engine uses until the first snapshot loads (typically its old environment flags)."""

    skills_enabled: Mapping[str, bool] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, Number]] = field(default_factory=dict)
    autonomy: Mapping[str, bool] = field(default_factory=dict)
    models: Mapping[str, str | None] = field(default_factory=dict)

    def skill_enabled(self, skill_id: str) -> bool:
        return self.skills_enabled.get(skill_id, False)

    def threshold(self, skill_id: str, key: str) -> Number:
        values = self.thresholds.get(skill_id, {})
        if key not in values:
            raise UnknownThreshold(f"no default threshold {key!r} for skill {skill_id!r}, and no snapshot yet")
        return values[key]

    def autonomous(self, agent_id: str) -> bool:
        return self.autonomy.get(agent_id, False)

    def model(self, agent_id: str) -> str | None:
        return self.models.get(agent_id)

    def requires_confirmation(self, agent_id: str, tool_name: str) -> bool:
        # Before the registry has spoken, every tool waits for a human.
        return True

    def assignment(self, agent_id: str, decision_type: str, subject_id: str) -> Assignment | None:
        # No rollout is known before the registry has spoken.
        return None

    def for_subject(self, agent_id: str, decision_type: str, subject_id: str) -> SubjectSettings:
        # Which skills belong to which agent is the registry's to say; until
        # it has, every skill with a default is offered to every agent.
        skill_ids = set(self.skills_enabled) | set(self.thresholds)
        return SubjectSettings(
            agent_id=agent_id,
            model=self.model(agent_id),
            autonomous=self.autonomous(agent_id),
            skills=MappingProxyType(
                {
                    skill_id: SkillSettings(
                        agent_id=agent_id,
                        source="defaults",
                        enabled=self.skill_enabled(skill_id),
                        thresholds=MappingProxyType(dict(self.thresholds.get(skill_id, {}))),
                        tool_names=(),
                        version=0,
                    )
                    for skill_id in skill_ids
                }
            ),
            confirmations=MappingProxyType({}),
        )


class RegistryClient:
    """Keeps the registry snapshot current for one engine process.

    Args:
        address: the registry's gRPC address, ``host:port``.
        internal_key: sent as ``x-internal-key`` metadata on every call.
        cache_path: where the last good snapshot is kept on disk, or None.
        defaults: settings used until the first snapshot loads.
        retry_min_s, retry_max_s: the backoff between attempts while the
            registry cannot be reached.
        check_interval_s: how often a quiet watch is confirmed with one
            GetSnapshot; a connection that died without a reset (the host
            vanished) is otherwise never noticed. Also the poll interval
            when the registry offers no watch at all.
        call_timeout_s: the deadline of each GetSnapshot.
        tls: the CA to trust the registry by (and a client certificate when
            the contexts require one); plaintext when None.
    """

    def __init__(
        self,
        address: str,
        internal_key: str,
        *,
        cache_path: str | os.PathLike[str] | None = None,
        defaults: RegistryDefaults | None = None,
        retry_min_s: float = 0.5,
        retry_max_s: float = 30.0,
        check_interval_s: float = 30.0,
        call_timeout_s: float = 5.0,
        tls: TlsFiles | None = None,
    ) -> None:
        if not address:
            raise ValueError("address is required: the registry's host:port")
        if not internal_key:
            raise ValueError("internal_key is required: the registry refuses calls without it")
        if not 0 < retry_min_s <= retry_max_s:
            raise ValueError("retry_min_s must be positive and at most retry_max_s")
        self._address = address
        self._internal_key = internal_key
        self._tls = tls
        self._cache_path = Path(cache_path) if cache_path is not None else None
        self._defaults = defaults or RegistryDefaults()
        self._retry_min_s = retry_min_s
        self._retry_max_s = retry_max_s
        self._check_interval_s = check_interval_s
        self._call_timeout_s = call_timeout_s
        self._snapshot: RegistrySnapshot | None = None
        self._source: Source = "defaults"
        self._connected = False
        # Replaced on every change; a waiter holds the one current when it looked.
        self._changed = asyncio.Event()
        self._listeners: list[Callable[[RegistrySnapshot], None]] = []
        self._channel: grpc.aio.Channel | None = None
        self._task: asyncio.Task[None] | None = None

    # ─── Life cycle ────────────────────────────────────────────────────────

    async def start(self) -> None:
        """Load the disk copy (if any) and start following the registry in the background.

        Returns at once; the engine runs on the disk copy or the defaults
        until the registry answers. Use `wait_for_snapshot` to wait for it.
        """
        if self._task is not None:
            return
        self._load_cache()
        self._channel = keyed_channel(self._address, self._internal_key, tls=self._tls)
        stub = registry_pb2_grpc.RegistryStub(self._channel)
        self._task = asyncio.create_task(self._follow(stub), name="outrider.registry-client")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._channel is not None:
            await self._channel.close(None)
            self._channel = None
        self._connected = False

    async def __aenter__(self) -> RegistryClient:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    # ─── State ─────────────────────────────────────────────────────────────

    @property
    def snapshot(self) -> RegistrySnapshot | None:
        """The snapshot in force, or None while the defaults apply."""
        return self._snapshot

    @property
    def source(self) -> Source:
        """Where the settings in force come from: defaults, disk or registry."""
        return self._source

    @property
    def connected(self) -> bool:
        """True while a watch stream to the registry is open."""
        return self._connected

    def on_change(self, listener: Callable[[RegistrySnapshot], None]) -> None:
        """Call `listener` with each new snapshot; an exception in it is logged, not raised."""
        self._listeners.append(listener)

    async def wait_for_snapshot(self, timeout: float | None = None) -> RegistrySnapshot | None:
        """Wait until a snapshot from the registry or disk is in force; None on timeout."""
        return await self._wait(lambda: self._snapshot is not None, timeout)

    async def wait_for_change(self, etag: str | None, timeout: float | None = None) -> RegistrySnapshot | None:
        """Wait until the snapshot in force is not `etag`; None on timeout."""
        return await self._wait(lambda: self._snapshot is not None and self._snapshot.etag != etag, timeout)

    async def _wait(self, ready: Callable[[], bool], timeout: float | None) -> RegistrySnapshot | None:
        try:
            async with asyncio.timeout(timeout):
                while not ready():
                    await self._changed.wait()
        except TimeoutError:
            return None
        return self._snapshot

    # ─── Accessors ─────────────────────────────────────────────────────────

    def skill_enabled(self, skill_id: str) -> bool:
        """Is the skill switched on? A skill the registry does not list is off."""
        return self._settings().skill_enabled(skill_id)

    def threshold(self, skill_id: str, key: str) -> Number:
        """A skill's tuned threshold; raises UnknownThreshold when nobody set one."""
        return self._settings().threshold(skill_id, key)

    def autonomous(self, agent_id: str) -> bool:
        """May the agent act without a human? An agent the registry does not list may not."""
        return self._settings().autonomous(agent_id)

    def model(self, agent_id: str) -> str | None:
        """The model pinned for the agent, or None for the engine's own default."""
        return self._settings().model(agent_id)

    def requires_confirmation(self, agent_id: str, tool_name: str) -> bool:
        """Must the agent ask a human before using the tool? Unknown tools always must."""
        return self._settings().requires_confirmation(agent_id, tool_name)

    def for_subject(self, agent_id: str, decision_type: str, subject_id: str) -> SubjectSettings:
        """The settings a decision about this subject obeys, with its rollout arm; from memory, never a call.

        Outside a rollout they are the agent's settings above; inside one, a
        subject in the candidate arm gets the rollout's change applied.
        """
        return self._settings().for_subject(agent_id, decision_type, subject_id)

    def assignment(self, agent_id: str, decision_type: str, subject_id: str) -> Assignment | None:
        """The rollout arm a decision about this subject is made under; None outside a rollout."""
        # Asked on every decision recorded: the rollout is looked up here, not
        # through the snapshot's accessor, one call fewer per decision.
        snapshot = self._snapshot
        rollout = snapshot.rollouts.get((agent_id, decision_type)) if snapshot is not None else None
        return None if rollout is None else rollout.assign(subject_id)

    def _settings(self) -> RegistrySnapshot | RegistryDefaults:
        return self._snapshot if self._snapshot is not None else self._defaults

    # ─── Following the registry ────────────────────────────────────────────

    async def _follow(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        failures = 0
        can_watch = True
        while True:
            opened = False
            if can_watch:
                try:
                    opened = await self._watch(stub)
                except grpc.aio.AioRpcError as error:
                    if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                        can_watch = False
                    _log.info("registry watch ended: %s", refusal(error).code)
                finally:
                    self._connected = False
            try:
                await self._poll(stub)
            except grpc.aio.AioRpcError as error:
                _log.warning("registry unreachable (%s); keeping the %s settings", refusal(error).code, self._source)
            else:
                if not can_watch:
                    failures = 0
                    await asyncio.sleep(self._check_interval_s)
                    continue
            failures = 0 if opened else failures + 1
            await asyncio.sleep(self._backoff(failures + 1))

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self._retry_max_s, self._retry_min_s * 2.0 ** (attempt - 1))
        # Jitter spreads a fleet's reconnects after a registry restart.
        return ceiling * random.uniform(0.5, 1.0)

    async def _watch(self, stub: registry_pb2_grpc.RegistryStub) -> bool:
        """Follow one watch stream until it ends; True when it was open at some point."""
        # A copy read from disk is sent for again, so the first message
        # confirms it came from the registry.
        held = self._snapshot if self._source == "registry" else None
        call = stub.WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=held.etag if held else ""))
        opened = False
        read: asyncio.Future[Any] | None = None
        try:
            await call.initial_metadata()
            opened = self._connected = not call.done()
            while True:
                read = asyncio.ensure_future(call.read())
                while True:
                    done, _ = await asyncio.wait({read}, timeout=self._check_interval_s)
                    if done:
                        break
                    # A quiet stream is normal; confirm the registry is still
                    # there, or give the stream up and fall back to polling.
                    await self._poll(stub)
                message = read.result()
                if message is grpc.aio.EOF:  # type: ignore[attr-defined]  # grpc-stubs omits the EOF sentinel
                    return opened
                self._apply(message.etag, message.document)
        finally:
            if read is not None and not read.done():
                read.cancel()
            call.cancel()

    async def _poll(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        held = self._snapshot
        reply = await stub.GetSnapshot(
            registry_pb2.GetSnapshotRequest(if_none_match=held.etag if held else ""),
            timeout=self._call_timeout_s,
        )
        if reply.not_modified:
            # The registry confirmed the copy in force, even one read from disk.
            self._source = "registry"
        else:
            self._apply(reply.snapshot.etag, reply.snapshot.document)

    def _apply(self, etag: str, document: bytes, *, source: Source = "registry") -> None:
        if self._snapshot is not None and etag == self._snapshot.etag:
            if source == "registry":
                self._source = "registry"
            return
        try:
            snapshot = RegistrySnapshot.parse(etag, document)
        except SnapshotFormatError as error:
            _log.error("ignoring a registry snapshot: %s; keeping the %s settings", error, self._source)
            return
        self._snapshot = snapshot
        self._source = source
        if source == "registry":
            self._save_cache(snapshot)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        for listener in list(self._listeners):
            try:
                listener(snapshot)
            except Exception:  # noqa: BLE001 - one bad listener must not stop the updates
                _log.exception("registry change listener failed")

    # ─── Disk copy ─────────────────────────────────────────────────────────

    def _load_cache(self) -> None:
        if self._cache_path is None or self._snapshot is not None:
            return
        try:
            saved = json.loads(self._cache_path.read_text(encoding="utf-8"))
            if saved.get("cache_version") != _CACHE_VERSION:
                raise SnapshotFormatError(f"cache version {saved.get('cache_version')!r}")
            etag, document = str(saved["etag"]), saved["document"].encode()
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            _log.warning("ignoring the registry cache at %s: %s", self._cache_path, error)
            return
        self._apply(etag, document, source="disk")

    def _save_cache(self, snapshot: RegistrySnapshot) -> None:
        if self._cache_path is None:
            return
        payload = {
            "cache_version": _CACHE_VERSION,
            "etag": snapshot.etag,
            "document": snapshot.document.decode(),
        }
        directory = self._cache_path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            # Written beside the target and renamed over it: a crash mid-write
            # leaves the previous copy whole instead of half a file.
            fd, temporary = tempfile.mkstemp(prefix=f".{self._cache_path.name}.", dir=directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(payload, handle, separators=(",", ":"))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, self._cache_path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            _log.warning("could not save the registry cache to %s: %s", self._cache_path, error)
