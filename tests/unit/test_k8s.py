"""No cluster runs here, so deploy/k8s is checked against the code, as
compose.yaml is: every command a real subcommand, every variable one the
settings read, every address a Service with the port the settings derive,
every probe on a health endpoint the code serves, and the NATS configuration
the one the embedded server is given, valid to the real nats-server."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from gateway.app import create_app
from launcher.cli import parser
from services.common.embedded import nats_server_binary
from services.common.nats import NatsUser, authorization
from services.common.runtime import LIVENESS_SERVICE
from services.common.settings import CONTEXTS, ENV_PREFIXES, ENV_VARS, Settings, load

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KUSTOMIZATION = yaml.safe_load((K8S / "kustomization.yaml").read_text())
DOCUMENTS = [doc for name in KUSTOMIZATION["resources"] for doc in yaml.safe_load_all((K8S / name).read_text())]


def of_kind(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in DOCUMENTS if doc["kind"] == kind}


DEPLOYMENTS = of_kind("Deployment")
SERVICES = of_kind("Service")
CONFIG_MAPS = of_kind("ConfigMap")
(NATS,) = of_kind("StatefulSet").values()
SHARED_ENV: dict[str, str] = CONFIG_MAPS["outrider-env"]["data"]
# The Secret's keys, as the apply instructions create them.
SECRET_KEYS = set(re.findall(r"--from-literal=([a-z-]+)=", (K8S / "kustomization.yaml").read_text()))
# What a secret holds, standing in for the value: long enough for every rule.
STAND_IN = {"database-url": "postgresql+asyncpg://outrider:pw@outrider-postgres:5432/outrider"}


def container(workload: dict) -> dict:
    (only,) = workload["spec"]["template"]["spec"]["containers"]
    return only


def environment(workload: dict) -> dict[str, str]:
    """The container's environment as the pod would see it, secrets stood in."""
    spec = container(workload)
    env: dict[str, str] = {}
    for source in spec.get("envFrom", []):
        env.update(CONFIG_MAPS[source["configMapRef"]["name"]]["data"])
    for entry in spec.get("env", []):
        if "value" in entry:
            env[entry["name"]] = str(entry["value"])
            continue
        source = entry["valueFrom"]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            assert ref["name"] == "outrider-secrets" and ref["key"] in SECRET_KEYS, ref
            env[entry["name"]] = STAND_IN.get(ref["key"], "s" * 40)
        else:
            env[entry["name"]] = "from-the-pod"
    return env


def named_port(spec: dict, name: str) -> int:
    return next(port["containerPort"] for port in spec["ports"] if port["name"] == name)


def test_every_part_runs_and_the_kustomization_lists_every_file():
    assert set(DEPLOYMENTS) == {f"outrider-{name}" for name in (*CONTEXTS, "gateway")}
    assert {path.name for path in K8S.glob("*.yaml")} == {"kustomization.yaml", *KUSTOMIZATION["resources"]}
    assert SERVICES["outrider-postgres"]["spec"]["type"] == "ExternalName"
    for workload in [*DEPLOYMENTS.values(), NATS]:
        assert workload["spec"]["replicas"] >= 2, workload["metadata"]["name"]
        requests = container(workload)["resources"]["requests"]
        assert set(requests) == {"cpu", "memory"}, workload["metadata"]["name"]


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_commands_are_real_subcommands(name):
    args = parser().parse_args(container(DEPLOYMENTS[name])["args"])
    if args.command == "serve":
        assert f"outrider-{args.context}" == name
    else:
        assert (name, args.command) == ("outrider-gateway", "gateway")


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_environment_is_what_the_settings_read(name):
    env = environment(DEPLOYMENTS[name])
    unknown = [key for key in env if key not in ENV_VARS and not key.startswith(ENV_PREFIXES)]
    assert unknown == []
    settings = load(env)
    assert settings.production
    assert settings.nats_replicas == NATS["spec"]["replicas"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_each_context_is_reached_at_a_headless_service_on_its_port(context):
    settings = load(environment(DEPLOYMENTS[f"outrider-{context}"]))
    host, port = settings.addr(context).rsplit(":", 1)
    service = SERVICES[host]
    # Headless: the name resolves to every replica, which round_robin needs,
    # ready or not, since callers pick replicas by their liveness.
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == DEPLOYMENTS[f"outrider-{context}"]["spec"]["selector"]["matchLabels"]
    spec = container(DEPLOYMENTS[f"outrider-{context}"])
    assert [p["port"] for p in service["spec"]["ports"]] == [int(port)] == [named_port(spec, "grpc")]
    assert settings.port(context) == int(port) and settings.grpc_host == "0.0.0.0"
    # Ready means serving (the overall health); alive means no job died.
    assert spec["readinessProbe"]["grpc"] == {"port": settings.port(context)}
    assert spec["livenessProbe"]["grpc"] == {"port": settings.port(context), "service": LIVENESS_SERVICE}


def test_the_gateway_listens_where_its_service_and_probes_look():
    spec = container(DEPLOYMENTS["outrider-gateway"])
    settings = load(environment(DEPLOYMENTS["outrider-gateway"]))
    assert named_port(spec, "http") == settings.http_port and settings.http_host == "0.0.0.0"
    assert SERVICES["outrider-gateway"]["spec"]["ports"][0]["targetPort"] == "http"
    routes = set(create_app(Settings(jwt_secret="j" * 40, internal_key="k" * 40)).openapi()["paths"])
    assert spec["readinessProbe"]["httpGet"]["path"] == "/readyz" in routes
    assert spec["livenessProbe"]["httpGet"]["path"] == "/healthz" in routes


def nats_conf() -> str:
    return CONFIG_MAPS["outrider-nats"]["data"][Path(container(NATS)["args"][1]).name]


def test_nats_servers_are_the_ones_the_clients_and_routes_name():
    spec = container(NATS)
    servers = [f"{NATS['metadata']['name']}-{n}.{NATS['spec']['serviceName']}" for n in range(NATS["spec"]["replicas"])]
    assert SHARED_ENV["NATS_URL"].split(",") == [f"nats://{s}:{named_port(spec, 'client')}" for s in servers]
    conf = json.loads(re.sub(r"\$([A-Z_]+)", r'"$\1"', nats_conf()))
    assert conf["cluster"]["routes"] == [f"nats://{s}:{named_port(spec, 'cluster')}" for s in servers]
    assert SERVICES[NATS["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"
    assert conf["jetstream"]["store_dir"] in {mount["mountPath"] for mount in spec["volumeMounts"]}
    assert conf["http"].endswith(f":{named_port(spec, 'monitor')}")


def test_nats_admits_the_users_the_code_admits_with_the_same_permissions():
    conf = json.loads(re.sub(r"\$([A-Z_]+)", r'"$\1"', nats_conf()))
    defaults = Settings()
    assert conf["authorization"] == authorization(
        NatsUser(defaults.nats_user, "$OUTRIDER_NATS_PASSWORD"),
        NatsUser(defaults.nats_engine_user, "$OUTRIDER_NATS_ENGINE_PASSWORD"),
    )
    # Each variable the configuration reads is in the server's environment.
    given = {entry["name"] for entry in container(NATS)["env"]}
    assert set(re.findall(r"\$([A-Z_]+)", nats_conf())) <= given


def test_the_real_nats_server_accepts_the_configuration(tmp_path):
    path = tmp_path / "nats.conf"
    path.write_text(nats_conf())
    env = {
        **os.environ,
        "POD_NAME": "outrider-nats-0",
        "OUTRIDER_NATS_PASSWORD": "s" * 40,
        "OUTRIDER_NATS_ENGINE_PASSWORD": "e" * 40,
    }
    checked = subprocess.run(
        [nats_server_binary(), "-c", str(path), "-t"], check=False, env=env, capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0 and "is valid" in checked.stderr + checked.stdout, checked.stderr
    # Without the secrets it refuses, rather than start with empty passwords.
    refused = subprocess.run(
        [nats_server_binary(), "-c", str(path), "-t"],
        check=False,
        env={"POD_NAME": "outrider-nats-0"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode != 0 and "OUTRIDER_NATS_PASSWORD" in refused.stderr
