"""Client SDK for engines: obey the registry, record decisions, ask for
precedents, pass the human-decision gate and publish telemetry.

Depends only on grpcio, protobuf, nats-py and the standard library, so an
engine installs it without the platform's server dependencies
(`pip install outrider`, no extra).
"""

from outrider.client.decisions import (
    DecisionRecorder,
    Precedent,
    PrecedentClient,
    Precedents,
    RecorderCounters,
)
from outrider.client.registry import (
    AgentSettings,
    RegistryClient,
    RegistryDefaults,
    RegistrySnapshot,
    SkillSettings,
    SnapshotFormatError,
    ToolSettings,
    UnknownThreshold,
)
from outrider.client.subjects import HumanDecision, Lease, LeaseRefused, SubjectGate
from outrider.client.telemetry import TelemetryPublisher
from outrider.nats_access import CredentialRefused
from outrider.rpc import TlsFiles, keyed_channel

__all__ = [
    "AgentSettings",
    "CredentialRefused",
    "DecisionRecorder",
    "HumanDecision",
    "Lease",
    "LeaseRefused",
    "Precedent",
    "PrecedentClient",
    "Precedents",
    "RecorderCounters",
    "RegistryClient",
    "RegistryDefaults",
    "RegistrySnapshot",
    "SkillSettings",
    "SnapshotFormatError",
    "SubjectGate",
    "TelemetryPublisher",
    "TlsFiles",
    "ToolSettings",
    "UnknownThreshold",
    "keyed_channel",
]
