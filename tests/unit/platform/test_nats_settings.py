"""The NATS credentials and TLS settings: what production requires, what
development generates, what is refused, and the configuration the embedded
server is given."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from launcher.cli import main
from outrider.engine_identity import LEGACY_SUBJECTS, public_nkey, subjects_of
from outrider.nats_access import ENGINE_INBOX_PREFIX, shown, uses_tls
from services.common.embedded import ServedTls, nats_config, nats_server_binary, write_private
from services.common.nats import ENGINE_PUBLISHES, STREAMS, EngineNkey, NatsUser, authorization_conf
from services.common.settings import SettingsError, load
from services.telemetry.otlp.codec import SUBJECT as OTLP_SUBJECT

SECRETS = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40, "OUTRIDER_SERVICE_KEY": "v" * 40}
PRODUCTION = {**SECRETS, "OUTRIDER_ENV": "production"}
SERVICE_PASSWORD = "s" * 32
ENGINE_PASSWORD = "e" * 32


def test_development_generates_both_passwords_once_per_data_dir(tmp_path):
    first = load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)})
    again = load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)})
    assert len(first.nats_password) >= 32 and len(first.nats_engine_password) >= 32
    assert first.nats_password != first.nats_engine_password
    assert (again.nats_password, again.nats_engine_password) == (first.nats_password, first.nats_engine_password)
    stored = tmp_path / "secrets" / "nats_engine_password"
    assert stored.read_text().strip() == first.nats_engine_password
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600


def test_production_requires_the_services_password_whatever_the_server(tmp_path):
    for nats_url in ({}, {"NATS_URL": "nats://nats:4222"}):
        with pytest.raises(SettingsError, match="OUTRIDER_NATS_PASSWORD"):
            load(
                {
                    **PRODUCTION,
                    **nats_url,
                    "OUTRIDER_DATA_DIR": str(tmp_path),
                    "OUTRIDER_NATS_ENGINE_PASSWORD": ENGINE_PASSWORD,
                }
            )


def test_production_requires_the_engines_password_only_for_the_embedded_server(tmp_path):
    env = {**PRODUCTION, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_NATS_PASSWORD": SERVICE_PASSWORD}
    with pytest.raises(SettingsError, match="OUTRIDER_NATS_ENGINE_PASSWORD"):
        load(env)
    external = load({**env, "NATS_URL": "nats://nats:4222"})
    assert external.nats_password == SERVICE_PASSWORD and external.nats_engine_password is None
    # Production never writes development secrets.
    assert not (tmp_path / "secrets").exists()


@pytest.mark.parametrize("variable", ["OUTRIDER_NATS_PASSWORD", "OUTRIDER_NATS_ENGINE_PASSWORD"])
@pytest.mark.parametrize("value", ["short-0123456789", "with blanks 0123456789 0123456789 01", "tab\t" * 9])
def test_a_weak_or_unwritable_password_is_refused_naming_the_variable_not_the_value(tmp_path, variable, value):
    with pytest.raises(SettingsError) as refused:
        load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), variable: value})
    assert variable in str(refused.value)
    assert value not in str(refused.value)


def test_engines_and_services_are_different_users(tmp_path):
    with pytest.raises(SettingsError, match="OUTRIDER_NATS_ENGINE_USER"):
        load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_NATS_ENGINE_USER": "outrider"})


def test_tls_files_must_exist_and_the_certificate_comes_with_its_key(tmp_path):
    cert = tmp_path / "server.pem"
    cert.write_text("certificate")
    base = {**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)}
    with pytest.raises(SettingsError, match="OUTRIDER_NATS_TLS_CA"):
        load({**base, "OUTRIDER_NATS_TLS_CA": str(tmp_path / "missing.pem")})
    with pytest.raises(SettingsError, match="OUTRIDER_NATS_TLS_KEY"):
        load({**base, "OUTRIDER_NATS_TLS_CERT": str(cert)})
    both = load({**base, "OUTRIDER_NATS_TLS_CERT": str(cert), "OUTRIDER_NATS_TLS_KEY": str(cert)})
    assert both.nats_tls_cert == both.nats_tls_key == cert


def _stored(subject: str) -> bool:
    """Whether some stream's subjects take `subject` (one token per `*`, the rest for `>`)."""

    def matches(pattern: list[str], tokens: list[str]) -> bool:
        if pattern == [">"]:
            return bool(tokens)
        if not pattern or not tokens:
            return pattern == tokens
        return pattern[0] in ("*", tokens[0]) and matches(pattern[1:], tokens[1:])

    return any(matches(stored.split("."), subject.split(".")) for spec in STREAMS for stored in spec.subjects)


def test_engines_may_publish_what_the_sdk_publishes_and_the_streams_store_their_runs_and_facts():
    assert set(ENGINE_PUBLISHES) == set(LEGACY_SUBJECTS.publishes)
    # Spans reach telemetry.otlp only through the gateway, which checks them
    # and strips prompt and completion contents; an engine publishing there
    # directly would skip both.
    assert OTLP_SUBJECT not in ENGINE_PUBLISHES
    for subjects in (LEGACY_SUBJECTS, subjects_of("dispatch")):
        assert OTLP_SUBJECT not in subjects.publishes
        # Runs and facts go to JetStream; heartbeats are core NATS, never stored.
        assert _stored(subjects.task_runs) and _stored(subjects.booking_facts)
        assert not _stored(subjects.heartbeats)


def test_each_engine_key_may_publish_only_its_own_subjects():
    config = nats_config(
        NatsUser("outrider", SERVICE_PASSWORD),
        NatsUser("engine", ENGINE_PASSWORD),
        engines=[EngineNkey("dispatch", "UDISPATCH"), EngineNkey("support", "USUPPORT")],
    )
    service, shared, dispatch, support = config["authorization"]["users"]
    assert "permissions" not in service
    assert shared["permissions"] == {
        "publish": {"allow": ["telemetry.task", "telemetry.agent", "facts.booking"]},
        "subscribe": {"allow": ["_INBOX_engine.>"]},
    }
    assert dispatch == {
        "nkey": "UDISPATCH",
        "permissions": {
            "publish": {"allow": ["telemetry.task.dispatch", "telemetry.agent.dispatch", "facts.booking.dispatch"]},
            "subscribe": {"allow": ["_INBOX_engine_dispatch.>"]},
        },
    }
    assert support["permissions"]["publish"]["allow"] == list(subjects_of("support").publishes)


def test_the_embedded_config_escapes_passwords_and_serves_tls_first(tmp_path):
    awkward = NatsUser("outrider", 'pa"ss\\word$HOME-é-0123456789012345')
    config = nats_config(
        awkward, NatsUser("engine", ENGINE_PASSWORD), ServedTls(tmp_path / "c.pem", tmp_path / "k.pem")
    )
    text = json.dumps(config, ensure_ascii=False)
    # The only escapes nats-server knows are \\" \\\\ \\t \\n \\r \\xXX: no \\u.
    assert "\\u" not in text
    assert json.loads(text)["authorization"]["users"][0]["password"] == awkward.password
    engine = config["authorization"]["users"][1]["permissions"]
    assert engine["subscribe"] == {"allow": [f"{ENGINE_INBOX_PREFIX}.>"]}
    assert config["tls"]["handshake_first"] is True
    assert "tls" not in nats_config(awkward, NatsUser("engine", ENGINE_PASSWORD))


def test_the_config_file_is_private_and_replaced_whole(tmp_path):
    path = tmp_path / "outrider-nats.conf"
    path.write_text("old")
    path.chmod(0o644)
    write_private(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["outrider-nats.conf"]


def test_urls_are_shown_without_credentials_and_tls_follows_the_scheme_or_a_ca():
    assert shown("nats://engine:secret@nats:4222") == "nats://nats:4222"
    assert shown("tls://u:p@[::1]:4222") == "tls://[::1]:4222"
    assert shown("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"
    assert uses_tls("tls://nats:4222", None) and uses_tls("nats://nats:4222", "/ca.pem")
    assert not uses_tls("nats://nats:4222", None)


def test_the_printed_authorization_names_every_key_and_the_real_server_accepts_it(tmp_path):
    keys = {"dispatch": ["d" * 40, "p" * 40], "support": {"keys": "s" * 40, "agents": ["SUPPORT_AGENT"]}}
    settings = load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_ENGINE_KEYS": json.dumps(keys)})
    text = authorization_conf(settings)
    for engine, key in (("dispatch", "d" * 40), ("dispatch", "p" * 40), ("support", "s" * 40), ("default", "k" * 40)):
        assert f'"nkey": "{public_nkey(key)}",  # engine {engine}' in text
    # No secret is printed: the passwords are the server's environment variables.
    assert "$OUTRIDER_NATS_PASSWORD" in text and "$OUTRIDER_NATS_ENGINE_PASSWORD" in text
    assert settings.nats_password not in text and "d" * 40 not in text
    assert "$OUTRIDER_NATS_ENGINE_PASSWORD" not in authorization_conf(settings, shared_user=False)
    path = tmp_path / "nats.conf"
    path.write_text(text)
    env = {**os.environ, "OUTRIDER_NATS_PASSWORD": "s" * 40, "OUTRIDER_NATS_ENGINE_PASSWORD": "e" * 40}
    checked = subprocess.run(
        [nats_server_binary(), "-c", str(path), "-t"], check=False, env=env, capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0 and "is valid" in checked.stderr + checked.stdout, checked.stderr


def test_the_command_prints_the_block(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OUTRIDER_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OUTRIDER_ENGINE_KEYS", json.dumps({"dispatch": "d" * 40}))
    assert main(["nats-authorization", "--without-shared-user"]) == 0
    printed = capsys.readouterr().out
    assert (
        printed.startswith("authorization: {") and f'"nkey": "{public_nkey("d" * 40)}",  # engine dispatch' in printed
    )
    assert '"user": "engine"' not in printed
