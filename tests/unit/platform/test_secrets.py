"""Keys and signing secrets: what every mode refuses, how development makes
its own, and rotation through a previous value."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import multiprocessing
import stat
import time

import pytest

from gateway.auth import issue_token, verify_token
from gateway.errors import ApiError
from services.common.callers import SERVICE_KEY_HEADER, identify
from services.common.settings import MIN_SECRET_CHARS, SettingsError, load

SECRET_VARIABLES = (
    "OUTRIDER_JWT_SECRET",
    "OUTRIDER_INTERNAL_KEY",
    "OUTRIDER_SERVICE_KEY",
    "OUTRIDER_SERVICE_KEY_PREVIOUS",
    "OUTRIDER_JWT_SECRET_PREVIOUS",
    "OUTRIDER_NATS_PASSWORD",
    "OUTRIDER_NATS_ENGINE_PASSWORD",
    "OUTRIDER_ALERT_WEBHOOK_SECRET",
)
GIVEN = {
    "OUTRIDER_JWT_SECRET": "j" * 40,
    "OUTRIDER_INTERNAL_KEY": "k" * 40,
    "OUTRIDER_SERVICE_KEY": "v" * 40,
    "OUTRIDER_NATS_PASSWORD": "n" * 40,
    "OUTRIDER_NATS_ENGINE_PASSWORD": "e" * 40,
}
PRODUCTION = {**GIVEN, "OUTRIDER_ENV": "production"}

WEAK = ["x", "x" * (MIN_SECRET_CHARS - 1), "with a blank in it " + "x" * 32, "x" * 32 + "\x07", "x" * 32 + "\n" + "y"]


@pytest.mark.parametrize("mode", ["development", "production"])
@pytest.mark.parametrize("variable", SECRET_VARIABLES)
@pytest.mark.parametrize("weak", WEAK)
def test_a_weak_secret_is_refused_in_every_mode_naming_the_variable_not_the_value(tmp_path, mode, variable, weak):
    env = {**GIVEN, "OUTRIDER_ENV": mode, "OUTRIDER_DATA_DIR": str(tmp_path), variable: weak}
    with pytest.raises(SettingsError) as refused:
        load(env)
    message = str(refused.value)
    assert message.startswith(variable + " ") and "\n" not in message
    assert weak.strip() not in message


@pytest.mark.parametrize("weak", ["short", "k" * 31, "key with blanks " + "k" * 32])
def test_each_engine_key_is_held_to_the_same_rule(tmp_path, weak):
    with pytest.raises(SettingsError, match="OUTRIDER_ENGINE_KEYS") as refused:
        load(
            {
                **GIVEN,
                "OUTRIDER_DATA_DIR": str(tmp_path),
                "OUTRIDER_ENGINE_KEYS": f'{{"dispatch": "{"d" * 40}", "support": "{weak}"}}',
            }
        )
    assert weak not in str(refused.value)


@pytest.mark.parametrize("variable", ["OUTRIDER_JWT_SECRET", "OUTRIDER_SERVICE_KEY", "OUTRIDER_NATS_PASSWORD"])
@pytest.mark.parametrize("blank", ["", "   "])
def test_production_refuses_to_boot_with_a_secret_missing_or_blank(tmp_path, variable, blank):
    with pytest.raises(SettingsError, match=f"production refuses to boot without {variable}"):
        load({**PRODUCTION, "OUTRIDER_DATA_DIR": str(tmp_path), variable: blank})


def test_production_needs_an_engine_key_of_some_kind(tmp_path):
    without = {k: v for k, v in PRODUCTION.items() if k != "OUTRIDER_INTERNAL_KEY"}
    with pytest.raises(SettingsError, match="OUTRIDER_INTERNAL_KEY or OUTRIDER_ENGINE_KEYS"):
        load({**without, "OUTRIDER_DATA_DIR": str(tmp_path)})
    named = load(
        {**without, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_ENGINE_KEYS": f'{{"dispatch": "{"d" * 40}"}}'}
    )
    assert named.engine_keys == {"dispatch": ("d" * 40,)}


def test_development_makes_each_missing_secret_once_private_and_strong(tmp_path):
    first = load({"OUTRIDER_DATA_DIR": str(tmp_path)})
    again = load({"OUTRIDER_DATA_DIR": str(tmp_path)})
    made = {
        name: getattr(first, name)
        for name in ("jwt_secret", "internal_key", "service_key", "nats_password", "nats_engine_password")
    }
    assert len(set(made.values())) == len(made)
    for name, value in made.items():
        assert len(value) >= MIN_SECRET_CHARS and getattr(again, name) == value
        assert stat.S_IMODE((tmp_path / "secrets" / name).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700
    # Nothing half-made is left beside them.
    assert sorted(p.name for p in (tmp_path / "secrets").iterdir()) == sorted(made)


@pytest.mark.parametrize("damaged", ["", "\n", "short"])
def test_a_damaged_generated_secret_is_refused_not_used(tmp_path, damaged):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "service_key").write_text(damaged)
    with pytest.raises(SettingsError, match=r"service_key .*delete it"):
        load({**{k: v for k, v in GIVEN.items() if k != "OUTRIDER_SERVICE_KEY"}, "OUTRIDER_DATA_DIR": str(tmp_path)})


def _load_at_once(data_dir: str, start: multiprocessing.synchronize.Barrier, answers: multiprocessing.Queue) -> None:
    start.wait(timeout=60)
    try:
        settings = load({"OUTRIDER_DATA_DIR": data_dir})
        answers.put((settings.jwt_secret, settings.internal_key, settings.service_key))
    except Exception as error:  # noqa: BLE001 - reported to the test, which fails on it
        answers.put(("failed", repr(error), ""))


def test_processes_starting_at_once_agree_on_every_secret_and_none_reads_an_empty_one(tmp_path):
    forked = multiprocessing.get_context("fork")
    processes, rounds = 12, 5
    for round_number in range(rounds):
        data_dir = tmp_path / f"round-{round_number}"
        start, answers = forked.Barrier(processes), forked.Queue()
        workers = [forked.Process(target=_load_at_once, args=(str(data_dir), start, answers)) for _ in range(processes)]
        for worker in workers:
            worker.start()
        try:
            seen = [answers.get(timeout=60) for _ in workers]
            for worker in workers:
                worker.join(timeout=60)
        finally:
            # A round that fails must not leave its workers behind: one still
            # waiting at the barrier, or flushing an answer nobody reads,
            # would hold the whole run's exit until it is killed.
            for worker in workers:
                if worker.is_alive():
                    worker.kill()
                    worker.join(timeout=5)
        assert all(answer[0] != "failed" for answer in seen), seen
        assert len(set(seen)) == 1
        assert all(len(value) >= MIN_SECRET_CHARS for value in seen[0])


def _signed_with_empty_secret(claims: dict[str, object]) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    signing_input = f"{part(json.dumps({'alg': 'HS256', 'typ': 'JWT'}).encode())}.{part(json.dumps(claims).encode())}"
    return f"{signing_input}.{part(hmac.new(b'', signing_input.encode(), hashlib.sha256).digest())}"


def test_a_token_signed_with_the_previous_secret_is_accepted_during_a_rollover():
    current, previous = "c" * 40, "p" * 40
    old_token = issue_token(previous, sub="u-1", role=1)
    assert verify_token((current, previous), old_token).sub == "u-1"
    with pytest.raises(ApiError, match="not valid"):
        verify_token((current,), old_token)
    # A token signed with an empty secret, which anyone can make, is never let in.
    forged = _signed_with_empty_secret({"sub": "u-1", "role": 1, "tenant_id": 0, "exp": int(time.time()) + 60})
    with pytest.raises(ApiError, match="not valid"):
        verify_token(("", current), forged)


def test_the_previous_service_key_and_engine_key_are_accepted_and_empty_ones_never_match():
    current, previous = "c" * 40, "p" * 40
    engines = {"dispatch": ("d" * 40, "o" * 40)}
    for presented in (current, previous):
        assert (
            identify(((SERVICE_KEY_HEADER, presented),), engine_keys={}, service_keys=(current, previous)).kind
            == "service"
        )
    for presented in engines["dispatch"]:
        caller = identify((("x-internal-key", presented),), engine_keys=engines, service_keys=(current,))
        assert caller is not None and caller.engine == "dispatch"
    assert identify(((SERVICE_KEY_HEADER, ""),), engine_keys={"e": ("",)}, service_keys=("",)) is None
    assert identify((("x-internal-key", ""),), engine_keys={"e": ("",)}, service_keys=("",)) is None
    assert identify((), engine_keys=engines, service_keys=(current,)) is None


def test_production_with_an_alert_webhook_needs_its_secret(tmp_path):
    hook = {"OUTRIDER_ALERT_WEBHOOK_URL": "https://hooks.example.com/x", "OUTRIDER_DATA_DIR": str(tmp_path)}
    with pytest.raises(SettingsError, match="OUTRIDER_ALERT_WEBHOOK_SECRET"):
        load({**PRODUCTION, **hook})
    given = load({**PRODUCTION, **hook, "OUTRIDER_ALERT_WEBHOOK_SECRET": "w" * 40})
    assert given.alert_webhook_secret == "w" * 40
    # Without a URL nothing is delivered, so nothing needs signing.
    assert load({**PRODUCTION, "OUTRIDER_DATA_DIR": str(tmp_path)}).alert_webhook_secret is None


def test_an_alert_webhook_is_an_http_url(tmp_path):
    with pytest.raises(SettingsError, match="OUTRIDER_ALERT_WEBHOOK_URL"):
        load({**GIVEN, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_ALERT_WEBHOOK_URL": "ftp://x"})
