"""The command line's answers to bad input and faults: one clear line, exit ≠ 0."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import jwt

from services.common.settings import CONTEXTS
from tests.harness import reserved_port, reserved_ports


def outrider(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "launcher.cli", *args],
        capture_output=True,
        text=True,
        env=base,
        timeout=timeout,
        check=False,  # the tests read the exit status themselves
    )


def test_serve_an_unknown_context_lists_the_contexts(tmp_path):
    result = outrider("serve", "nosuch", env={"OUTRIDER_DATA_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert "nosuch" in result.stderr
    for context in ("registry", "decisions", "outcomes", "playground", "telemetry"):
        assert context in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_database_names_the_setting_and_address(tmp_path):
    port = reserved_port()
    started = time.monotonic()
    result = outrider(
        "serve",
        "registry",
        env={
            "OUTRIDER_DATA_DIR": str(tmp_path),
            "DATABASE_URL": f"postgresql+asyncpg://u:p@127.0.0.1:{port}/db",
            "OUTRIDER_REGISTRY_ADDR": f"127.0.0.1:{reserved_port()}",
        },
    )
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr
    assert f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 45


def test_unreachable_nats_names_the_setting_and_address(tmp_path, settings):
    port = reserved_port()
    result = outrider(
        "up",
        env={
            "OUTRIDER_DATA_DIR": str(tmp_path),
            "DATABASE_URL": settings.database_url,
            "NATS_URL": f"nats://127.0.0.1:{port}",
            "OUTRIDER_HTTP_PORT": str(reserved_port()),
            "OUTRIDER_GRPC_PORT": str(reserved_ports(len(CONTEXTS))),
        },
    )
    assert result.returncode != 0
    assert "NATS_URL" in result.stderr
    assert f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_named(tmp_path, settings):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = outrider(
            "serve",
            "registry",
            env={
                "OUTRIDER_DATA_DIR": str(tmp_path),
                "DATABASE_URL": settings.database_url,
                "OUTRIDER_REGISTRY_ADDR": f"127.0.0.1:{port}",
            },
        )
        gateway = outrider("gateway", env={"OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_HTTP_PORT": str(port)})
    assert result.returncode != 0
    assert str(port) in result.stderr and "in use" in result.stderr
    assert gateway.returncode != 0
    assert str(port) in gateway.stderr and "OUTRIDER_HTTP_PORT" in gateway.stderr


def test_production_refuses_to_boot_without_each_secret(tmp_path):
    both = outrider("token", "--role", "1", env={"OUTRIDER_ENV": "production", "OUTRIDER_DATA_DIR": str(tmp_path)})
    assert both.returncode != 0
    assert "OUTRIDER_JWT_SECRET" in both.stderr and "OUTRIDER_INTERNAL_KEY" in both.stderr
    one = outrider(
        "serve",
        "registry",
        env={"OUTRIDER_ENV": "production", "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_JWT_SECRET": "s" * 32},
    )
    assert one.returncode != 0
    assert "OUTRIDER_INTERNAL_KEY" in one.stderr and "OUTRIDER_JWT_SECRET" not in one.stderr


def test_token_is_signed_with_the_dev_secret_kept_in_the_data_dir(tmp_path):
    env = {"OUTRIDER_DATA_DIR": str(tmp_path)}
    first = outrider("token", "--role", "3", "--tenant", "0", "--email", "a@example.com", env=env)
    second = outrider("token", "--role", "1", env=env)
    assert first.returncode == 0 and second.returncode == 0
    secret = (tmp_path / "secrets" / "jwt_secret").read_text().strip()
    claims = jwt.decode(first.stdout.strip(), secret, algorithms=["HS256"])
    assert claims["role"] == 3 and claims["tenant_id"] == 0 and claims["email"] == "a@example.com"
    assert jwt.decode(second.stdout.strip(), secret, algorithms=["HS256"])["role"] == 1


def test_a_sign_in_link_without_a_role_is_role_1_and_a_token_for_no_console_role_is_refused(tmp_path):
    env = {"OUTRIDER_DATA_DIR": str(tmp_path)}
    link = outrider("token", "--console", env=env)
    assert link.returncode == 0, link.stderr
    secret = (tmp_path / "secrets" / "jwt_secret").read_text().strip()
    assert jwt.decode(link.stdout.strip().partition("#token=")[2], secret, algorithms=["HS256"])["role"] == 1
    bare = outrider("token", env=env)
    assert bare.returncode == 2 and "--role is required" in bare.stderr and not bare.stdout
    for role in ("0", "2", "5", "9", "-1"):
        refused = outrider("token", "--role", role, env=env)
        assert refused.returncode == 2, role
        assert f"--role {role} is no console role: one of 1, 3, 4" in refused.stderr and not refused.stdout
    for hours in ("0", "-3", "1.5", "x"):
        refused = outrider("token", "--role", "1", "--ttl-hours", hours, env=env)
        assert refused.returncode == 2 and "--ttl-hours" in refused.stderr and not refused.stdout, hours


def test_token_console_prints_a_sign_in_link_with_the_token_in_the_fragment(tmp_path):
    env = {"OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_HTTP_PORT": "8123", "OUTRIDER_HTTP_HOST": "0.0.0.0"}
    link = outrider("token", "--console", "--role", "4", "--tenant", "9", env=env)
    assert link.returncode == 0, link.stderr
    url, _, token = link.stdout.strip().partition("#token=")
    # Bound to every interface, the gateway is still reached on loopback; the
    # token rides in the fragment, which no browser sends to a server.
    assert url == "http://127.0.0.1:8123/console/" and "?" not in url
    secret = (tmp_path / "secrets" / "jwt_secret").read_text().strip()
    claims = jwt.decode(token, secret, algorithms=["HS256"])
    assert (claims["role"], claims["tenant_id"]) == (4, 9)
    assert claims["exp"] - claims["iat"] == 8 * 3600
    longer = outrider("token", "--console", "--role", "1", "--ttl-hours", "1", env=env)
    one_hour = jwt.decode(longer.stdout.strip().partition("#token=")[2], secret, algorithms=["HS256"])
    assert one_hour["exp"] - one_hour["iat"] == 3600
