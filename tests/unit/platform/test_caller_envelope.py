"""The caller envelope is signed once a second per caller and key, and what
is kept is exactly what signing again would give: the same expiry, the same
caller, a signature only that key makes."""

from __future__ import annotations

import pytest

from services.common import callers
from services.common.callers import ENVELOPE_TTL_S, Caller, Principal, Refusal, seal, unseal

KEY = "s" * 40
NOW = 1_800_000_000.25
ENGINE = Caller(kind="service", engine="dispatch")
PERSON = Caller(kind="service", principal=Principal(sub="u-1", email="ops@example.com", role=1, tenant_id=0))


def test_within_a_second_a_caller_gets_the_same_envelope() -> None:
    assert seal(ENGINE, KEY, now=NOW) == seal(ENGINE, KEY, now=NOW + 0.7)
    (_, payload), (_, signature) = seal(ENGINE, KEY, now=NOW + 0.7)
    assert unseal(payload, signature, [KEY], now=NOW) == ENGINE


def test_each_caller_second_and_key_gets_its_own() -> None:
    envelopes = {
        seal(ENGINE, KEY, now=NOW),
        seal(PERSON, KEY, now=NOW),
        seal(Caller(kind="service", engine="other"), KEY, now=NOW),
        seal(ENGINE, KEY, now=NOW + 1),
        seal(ENGINE, "t" * 40, now=NOW),
    }
    assert len(envelopes) == 5
    (_, payload), (_, signature) = seal(PERSON, KEY, now=NOW)
    assert unseal(payload, signature, [KEY], now=NOW) == PERSON
    with pytest.raises(Refusal):
        unseal(payload, signature, ["t" * 40], now=NOW)


def test_a_kept_envelope_expires_when_it_says() -> None:
    (_, payload), (_, signature) = seal(ENGINE, KEY, now=NOW)
    assert unseal(payload, signature, [KEY], now=NOW + ENVELOPE_TTL_S - 1) == ENGINE
    with pytest.raises(Refusal, match="expired"):
        unseal(payload, signature, [KEY], now=NOW + ENVELOPE_TTL_S + 1)


def _count_signatures(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every payload signed or checked from now on, in order."""
    signed: list[str] = []
    sign = callers._signature

    def counting(payload: str, key: str) -> str:
        signed.append(payload)
        return sign(payload, key)

    monkeypatch.setattr(callers, "_signature", counting)
    return signed


def test_a_caller_is_signed_for_once_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    signed = _count_signatures(monkeypatch)
    caller = Caller(kind="service", engine="counted")
    for offset in (0.0, 0.1, 0.5, 0.9, 1.0, 1.5):
        seal(caller, KEY, now=NOW - 0.25 + offset)
    assert len(signed) == 2


def test_an_envelope_checked_once_is_not_checked_again_but_still_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    caller = Caller(kind="service", engine="checked")
    (_, payload), (_, signature) = seal(caller, KEY, now=NOW)
    checked = _count_signatures(monkeypatch)
    for offset in (0, 1, 30):
        assert unseal(payload, signature, (KEY,), now=NOW + offset) == caller
    assert len(checked) == 1
    with pytest.raises(Refusal, match="expired"):
        unseal(payload, signature, (KEY,), now=NOW + ENVELOPE_TTL_S + 1)


def test_a_kept_check_answers_only_for_the_same_text_signature_and_keys() -> None:
    (_, payload), (_, signature) = seal(ENGINE, KEY, now=NOW)
    assert unseal(payload, signature, [KEY], now=NOW) == ENGINE
    forged = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    for attempt in (
        (payload, forged, [KEY]),
        (payload, signature, ["t" * 40]),
        (payload + "x", signature, [KEY]),
        (payload, signature, [""]),
    ):
        with pytest.raises(Refusal, match="signature"):
            unseal(*attempt, now=NOW)
    assert unseal(payload, signature, ["t" * 40, KEY], now=NOW) == ENGINE
