"""An engine's NATS identity: the credential derived from its key, pinned by a
vector an engine in any language can check itself against, the subjects and
inbox that carry its name, and the publisher that takes a name and key together."""

from __future__ import annotations

import base64
import hashlib
import hmac

import nacl.signing
import nkeys
import pytest

from outrider.client.telemetry import TelemetryPublisher
from outrider.engine_identity import (
    LEGACY_ENGINE,
    LEGACY_SUBJECTS,
    NKEY_LABEL,
    Sender,
    check_engine_name,
    nkey_seed,
    public_nkey,
    sender_of,
    subject_forms,
    subjects_of,
)

# The vector: this engine key gives this seed and this public nkey, now and
# in every later version (a change would re-key every engine at once).
VECTOR_KEY = "an-engine-key-for-the-test-vector-0123456789"
VECTOR_SEED = "SUAHZVAGMXRVVUSJM7LOPQJ2XZMX5BGWC724RN6GNJXI2WM2IABL5TPYEY"
VECTOR_PUBLIC = "UD66HLQWT32UNGL65DNLAQ5YTWOYCULLPNDJCCPVWI4HLJNZMDO75DK5"
VECTOR_HMAC = "7cd40665e35ad24967d6e7c13abe597e84d617f5c8b7c66a6e8d599a4002becd"


def test_the_derivation_gives_the_pinned_vector() -> None:
    assert hmac.new(VECTOR_KEY.encode(), NKEY_LABEL, hashlib.sha256).hexdigest() == VECTOR_HMAC
    assert nkey_seed(VECTOR_KEY) == VECTOR_SEED
    assert public_nkey(VECTOR_KEY) == VECTOR_PUBLIC


def test_the_seed_is_a_user_seed_holding_the_first_32_bytes_of_the_hmac() -> None:
    prefix, raw = nkeys.decode_seed(bytearray(VECTOR_SEED.encode()))
    assert prefix == nkeys.PREFIX_BYTE_USER
    assert bytes(raw) == bytes.fromhex(VECTOR_HMAC)[:32]


def test_the_public_nkey_is_the_ed25519_key_of_that_seed_and_verifies_its_signatures() -> None:
    decoded = base64.b32decode(VECTOR_PUBLIC + "=" * (-len(VECTOR_PUBLIC) % 8))
    assert decoded[0] == nkeys.PREFIX_BYTE_USER
    signing = nacl.signing.SigningKey(bytes.fromhex(VECTOR_HMAC)[:32])
    assert decoded[1:33] == bytes(signing.verify_key)
    # What the server does with a connection's challenge.
    pair = nkeys.from_seed(bytearray(nkey_seed(VECTOR_KEY).encode()))
    signature = pair.sign(b"server nonce")
    assert nacl.signing.VerifyKey(decoded[1:33]).verify(b"server nonce", signature) == b"server nonce"


def test_every_key_has_its_own_credential_and_one_key_always_the_same() -> None:
    keys = [f"{name}-engine-key-0123456789abcdefghijkl" for name in ("dispatch", "support", "previous")]
    assert len({public_nkey(key) for key in keys}) == len(keys)
    assert nkey_seed(keys[0]) == nkey_seed(keys[0])


def test_an_engine_publishes_on_subjects_and_hears_on_an_inbox_that_carry_its_name() -> None:
    dispatch = subjects_of("dispatch")
    assert dispatch.publishes == ("telemetry.task.dispatch", "telemetry.agent.dispatch", "facts.booking.dispatch")
    assert dispatch.inbox_prefix == "_INBOX_engine_dispatch"
    assert LEGACY_SUBJECTS.publishes == ("telemetry.task", "telemetry.agent", "facts.booking")
    # No name gives an engine the shared user's inbox or another engine's.
    assert subjects_of("engine").inbox_prefix != LEGACY_SUBJECTS.inbox_prefix
    assert subject_forms("telemetry.task") == ("telemetry.task", "telemetry.task.*")


@pytest.mark.parametrize("name", ["dispatch", "Support_2", "a-b", "x" * 64, "default", "engine"])
def test_a_subject_safe_name_is_an_engine_name(name: str) -> None:
    assert check_engine_name(name) == name


@pytest.mark.parametrize("name", ["", "a.b", "a*", ">", "a b", "x" * 65, "dïspatch", "a\tb", "a/b"])
def test_a_name_that_is_not_one_subject_token_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="engine name"):
        check_engine_name(name)
    with pytest.raises(ValueError, match="engine name"):
        subjects_of(name)


@pytest.mark.parametrize(
    ("subject", "sender"),
    [
        ("telemetry.task", Sender(LEGACY_ENGINE, "_INBOX_engine")),
        ("telemetry.task.dispatch", Sender("dispatch", "_INBOX_engine_dispatch")),
        ("telemetry.task.dispatch.more", None),
        ("telemetry.taskdispatch", None),
        ("telemetry.agent.dispatch", None),
        ("facts.booking.dispatch", None),
    ],
)
def test_the_subject_alone_says_who_sent_a_run(subject: str, sender: Sender | None) -> None:
    assert sender_of(subject, "telemetry.task") == sender


def test_only_the_senders_own_inboxes_may_be_answered() -> None:
    dispatch = sender_of("telemetry.agent.dispatch", "telemetry.agent")
    shared = sender_of("telemetry.agent", "telemetry.agent")
    assert dispatch is not None and shared is not None
    assert dispatch.owns_inbox("_INBOX_engine_dispatch.abc.1")
    assert shared.owns_inbox("_INBOX_engine.abc")
    for reply in ("telemetry.otlp", "$JS.API.STREAM.DELETE.TELEMETRY", "$KV.agent_heartbeats.X", "_INBOX.abc"):
        assert not dispatch.owns_inbox(reply) and not shared.owns_inbox(reply)
    assert not dispatch.owns_inbox("_INBOX_engine.abc")
    assert not shared.owns_inbox("_INBOX_engine_dispatch.abc")
    assert not dispatch.owns_inbox("_INBOX_engine_dispatch")


@pytest.mark.parametrize(
    "credentials",
    [
        {"engine": "dispatch"},
        {"key": VECTOR_KEY},
        {"engine": "dispatch", "key": VECTOR_KEY, "user": "engine", "password": "p" * 40},
        {"engine": "dis.patch", "key": VECTOR_KEY},
    ],
    ids=["a name without its key", "a key without its name", "a key and a user", "a name that is no subject token"],
)
async def test_the_publisher_refuses_a_half_or_double_credential_before_connecting(credentials) -> None:
    # The address is never dialled: each of these is refused first.
    with pytest.raises(ValueError, match="engine"):
        await TelemetryPublisher.connect("nats://127.0.0.1:1", timeout_s=0.1, **credentials)
