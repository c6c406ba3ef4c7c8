"""The health services a context answers besides the overall one ("") and
liveness: one per dependency it cannot work without.

A standard health reply carries a status and no reason. A context that is
NOT_SERVING because Postgres or NATS does not answer also says NOT_SERVING
under that dependency's service, so whoever asks (the gateway's /readyz)
can name what is missing.
"""

from __future__ import annotations

POSTGRES = "postgres"
NATS = "nats"
DEPENDENCIES = (POSTGRES, NATS)


def dependency_service(dependency: str) -> str:
    """The health service name under which a context says whether `dependency` answers it."""
    return f"outrider.dependency.{dependency}"
