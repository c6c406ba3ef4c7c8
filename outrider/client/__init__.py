"""Client SDK for engines: follow the registry and obey it.

Depends only on grpcio, protobuf and the standard library, so an engine can
install it without the platform's server dependencies.
"""

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

__all__ = [
    "AgentSettings",
    "RegistryClient",
    "RegistryDefaults",
    "RegistrySnapshot",
    "SkillSettings",
    "SnapshotFormatError",
    "ToolSettings",
    "UnknownThreshold",
]
