"""Reaching a context that runs as several replicas: every replica's address
in one channel, calls spread round-robin over those that answer their health
check, and the calls that are safe to repeat retried on another replica.

An address is one `host:port` (a DNS name resolving to every replica, as a
Kubernetes headless service or compose's service name does) or several IP
`host:port` comma-separated. gRPC dials a list only as `ipv4:`/`ipv6:` IP
literals; names in a list would each need a resolver of their own, so a list
of names is refused and one name resolving to all of them is the way.
"""

from __future__ import annotations

import ipaddress
import json

from google.protobuf import descriptor_pb2

from outrider.v1 import decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2

# Calls that read, or whose effect is the same however often it is applied:
# a caller may send them again on another replica when the first one failed
# as UNAVAILABLE, the status of a replica gone mid-call. Each proto says so
# of its own methods (`idempotency_level`), so a read added to a contract is
# retried without a second list here to forget. A write that is not
# idempotent is never retried for the caller: the lost replica may have
# committed it before it went. Streams are left out: gRPC retries one only
# until its first answer, which the stream's own reopening already covers.
_RETRIED_LEVELS = (descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS, descriptor_pb2.MethodOptions.IDEMPOTENT)


def _idempotent_methods() -> dict[str, tuple[str, ...]]:
    methods: dict[str, tuple[str, ...]] = {}
    for module in (decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            methods[service.full_name] = tuple(
                method.name
                for method in service.methods
                if method.GetOptions().idempotency_level in _RETRIED_LEVELS
                and not (method.client_streaming or method.server_streaming)
            )
    return methods


IDEMPOTENT: dict[str, tuple[str, ...]] = _idempotent_methods()

# The first try and two more: with two replicas, one of them on another.
MAX_ATTEMPTS = 3
RETRY_POLICY = {
    "maxAttempts": MAX_ATTEMPTS,
    "initialBackoff": "0.05s",
    "maxBackoff": "0.5s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}


# The health service a balanced channel watches: NOT_SERVING once a replica
# can no longer do its work (a background job died). Not the overall health,
# which is also NOT_SERVING while the replica's database is away: calls that
# need no database still work then, and the rest get a reason, not a refusal.
HEALTH_SERVICE = "outrider.liveness"


class AddressError(ValueError):
    pass


def _split(address: str) -> list[tuple[str, str]]:
    parts = []
    for item in address.split(","):
        host, colon, port = item.strip().rpartition(":")
        if not colon or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise AddressError(f"{item.strip()!r} must be host:port")
        parts.append((host.strip("[]"), port))
    return parts


def _ip_version(host: str) -> int | None:
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return None


def target(address: str) -> str:
    """The gRPC target for a context's address: one `host:port` as it is (a
    name is resolved to every address it has), several IPs as `ipv4:`/`ipv6:`."""
    parts = _split(address)
    if len(parts) == 1:
        return address.strip()
    versions = {_ip_version(host) for host, _ in parts}
    if None in versions:
        raise AddressError(
            f"several addresses must be IP addresses, got {address!r}; give one DNS name that"
            " resolves to every replica instead"
        )
    if versions == {4}:
        return "ipv4:" + ",".join(f"{host}:{port}" for host, port in parts)
    if versions == {6}:
        return "ipv6:" + ",".join(f"[{host}]:{port}" for host, port in parts)
    raise AddressError(f"several addresses must all be IPv4 or all IPv6, got {address!r}")


def service_config(*, health_checked: bool = True) -> str:
    """Round-robin over the replicas, with the idempotent calls retried; when
    health-checked, only over those whose HEALTH_SERVICE says SERVING (a
    context whose consumer died says NOT_SERVING and is skipped).

    A channel that asks the health service itself is not health-checked:
    through a health-checked one, a replica that says NOT_SERVING cannot be
    asked at all, and the question "what does it say" gets no answer."""
    config: dict[str, object] = {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [
                    {"service": service, "method": method}
                    for service, methods in IDEMPOTENT.items()
                    for method in methods
                ],
                "retryPolicy": RETRY_POLICY,
            }
        ],
    }
    if health_checked:
        config["healthCheckConfig"] = {"serviceName": HEALTH_SERVICE}
    return json.dumps(config)


def options(*, health_checked: bool = True) -> list[tuple[str, object]]:
    """Channel options of a balanced channel. The policy is named twice: as
    the service config's choice and as the channel's, which wins over any
    config a resolver might hand back."""
    return [
        ("grpc.lb_policy_name", "round_robin"),
        ("grpc.service_config", service_config(health_checked=health_checked)),
        ("grpc.enable_retries", 1),
    ]
