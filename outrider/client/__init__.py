"""Client SDK for engines: obey the registry, record decisions, ask for
precedents, pass the human-decision gate and publish telemetry.

Depends only on grpcio, protobuf, nats-py and the standard library, so an
engine installs it without the platform's server dependencies
(`pip install outrider`, no extra). Everything it raises when Outrider
refuses is an OutriderError (outrider.errors).
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
    SubjectSettings,
    ToolSettings,
    UnknownThreshold,
)
from outrider.client.rollouts import Assignment, RolloutSettings
from outrider.client.routing import ModelChoice, ModelRouter
from outrider.client.subjects import HumanDecision, Lease, SubjectGate
from outrider.client.telemetry import TelemetryPublisher
from outrider.errors import (
    AlreadyExists,
    Conflict,
    DatabaseUnavailable,
    DecisionIdReused,
    HumanSourceConflict,
    HumanSourcesMisconfigured,
    InvalidArgument,
    LeaseRefused,
    LeaseUnavailable,
    NotFound,
    OutriderError,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    Unavailable,
    refusal,
)
from outrider.nats_access import CredentialRefused
from outrider.rpc import TlsFiles, keyed_channel

__all__ = [
    "AgentSettings",
    "AlreadyExists",
    "Assignment",
    "Conflict",
    "CredentialRefused",
    "DatabaseUnavailable",
    "DecisionIdReused",
    "DecisionRecorder",
    "HumanDecision",
    "HumanSourceConflict",
    "HumanSourcesMisconfigured",
    "InvalidArgument",
    "Lease",
    "LeaseRefused",
    "LeaseUnavailable",
    "ModelChoice",
    "ModelRouter",
    "NotFound",
    "OutriderError",
    "PermissionDenied",
    "Precedent",
    "PrecedentClient",
    "Precedents",
    "RateLimited",
    "RecorderCounters",
    "RegistryClient",
    "RegistryDefaults",
    "RegistrySnapshot",
    "RolloutSettings",
    "SkillSettings",
    "SnapshotFormatError",
    "SubjectGate",
    "SubjectSettings",
    "TelemetryPublisher",
    "TlsFiles",
    "ToolSettings",
    "Unauthenticated",
    "Unavailable",
    "UnknownThreshold",
    "keyed_channel",
    "refusal",
]
