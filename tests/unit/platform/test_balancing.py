"""Several replicas per context: the addresses gRPC is given, the policy it
balances with, and which calls it may send again on another replica."""

from __future__ import annotations

import json

import pytest

from outrider import balancing
from outrider.balancing import IDEMPOTENT, AddressError, service_config, target
from outrider.v1 import decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2
from services.common.settings import SettingsError, load

SECRETS = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}
DESCRIPTORS = {
    module.DESCRIPTOR.package + "." + name: service
    for module in (decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2)
    for name, service in module.DESCRIPTOR.services_by_name.items()
}


def test_one_address_or_dns_name_is_dialled_as_it_is():
    assert target("registry:50051") == "registry:50051"
    assert target("10.0.0.7:50051") == "10.0.0.7:50051"


def test_several_ip_addresses_become_one_multi_address_target():
    assert target("10.0.0.7:50051, 10.0.0.8:50051") == "ipv4:10.0.0.7:50051,10.0.0.8:50051"
    assert target("[::1]:50051,[fd00::2]:50052") == "ipv6:[::1]:50051,[fd00::2]:50052"


@pytest.mark.parametrize(
    "address",
    ["registry-a:50051,registry-b:50051", "10.0.0.7:50051,[::1]:50051", "10.0.0.7,10.0.0.8:50051", "10.0.0.7:99999"],
)
def test_lists_grpc_cannot_dial_are_refused(address):
    with pytest.raises(AddressError):
        target(address)


def test_the_channel_balances_round_robin_over_healthy_replicas():
    config = json.loads(service_config())
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    assert config["healthCheckConfig"] == {"serviceName": balancing.HEALTH_SERVICE}
    assert ("grpc.lb_policy_name", "round_robin") in balancing.options()
    # A channel that asks the health service reaches every replica.
    assert "healthCheckConfig" not in json.loads(service_config(health_checked=False))


def test_only_calls_named_idempotent_are_retried_and_each_names_a_real_method():
    (method_config,) = json.loads(service_config())["methodConfig"]
    named = {(entry["service"], entry["method"]) for entry in method_config["name"]}
    assert named == {(service, method) for service, methods in IDEMPOTENT.items() for method in methods}
    assert method_config["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
    for service, method in named:
        assert method in DESCRIPTORS[service].methods_by_name, f"{service}/{method} is no rpc"
    # The writes that are not idempotent stay out: a replica lost mid-call
    # may have committed them.
    for write in ("RecordDecision", "SetOutcome", "UpdateAgent", "CreateSkill", "Run", "SubmitConversation"):
        assert all(write != method for _, method in named)


def test_a_context_address_setting_takes_replicas_and_refuses_a_list_of_names(tmp_path):
    env = {**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)}
    settings = load({**env, "OUTRIDER_REGISTRY_ADDR": "10.0.0.7:50051,10.0.0.8:50051"})
    assert settings.addr("registry") == "10.0.0.7:50051,10.0.0.8:50051"
    assert settings.port("registry") == 50051
    with pytest.raises(SettingsError, match="OUTRIDER_REGISTRY_ADDR"):
        load({**env, "OUTRIDER_REGISTRY_ADDR": "registry-a:50051,registry-b:50051"})
    two_ports = load({**env, "OUTRIDER_REGISTRY_ADDR": "127.0.0.1:50051,127.0.0.1:50061"})
    with pytest.raises(SettingsError, match="several ports"):
        two_ports.port("registry")


READ_VERBS = ("List", "Get", "Count", "Find", "Weigh", "Recommend", "Evaluate")


@pytest.mark.parametrize("service", sorted(DESCRIPTORS))
def test_every_unary_read_of_every_contract_is_retried(service):
    # The class, not the example: a read added to a contract without its
    # idempotency level would fail over as an error instead of retrying.
    unary_reads = {
        method.name
        for method in DESCRIPTORS[service].methods
        if method.name.startswith(READ_VERBS) and not (method.client_streaming or method.server_streaming)
    }
    assert unary_reads, f"{service} has no read"
    assert unary_reads <= set(IDEMPOTENT[service])
