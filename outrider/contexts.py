"""The five bounded contexts, each one gRPC service of proto/outrider/v1.

Declared here, the one module both the services and the `outrider` command
may import: the command names them before it may import any server code
(an engine's base install has none), and the services may not import the
command. The order is the order of their default ports: registry on the
base gRPC port, decisions on the next, and so on.
"""

from __future__ import annotations

from typing import Final

CONTEXTS: Final[tuple[str, ...]] = ("registry", "decisions", "outcomes", "playground", "telemetry")
