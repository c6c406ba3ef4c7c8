"""A decision's context as role 1 reads it: redacted by the playground's rules,
proven on generated contexts (the playground's planted-value strategies), and
its audit row holding counts only."""

import json
import re
import uuid
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.redaction.redactor import DEFAULT_RULES, RedactionRules
from services.decisions import codec, rules
from tests.unit.playground.planted import judge, planted_document, strings_in

PROPERTY = settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.data_too_large])
DECISION = uuid.UUID("795b0262-887a-468b-8d07-e1e403180cae")


@PROPERTY
@given(st.randoms(use_true_random=False))
def test_no_personal_value_of_a_context_reaches_the_answer_or_the_audit_row(rng):
    planted = planted_document(rng, size=rng.randrange(1, 16), obfuscate=rng.random() < 0.3)

    read = rules.redacted_context(DECISION, planted.document, erased_at=None, redaction=DEFAULT_RULES)
    answered = json.loads(codec.context_to_proto(read).context_json)
    audit = rules.context_read_audit(read, audit_id=uuid.uuid4())

    assert judge(planted, answered).leaked == []
    assert [harm for harm in judge(planted, answered).harmed if harm[0] != "word"] == []
    audited = "\n".join([*strings_in(audit.new), *map(str, audit.new["redacted"])])
    assert [probe for value in planted.personal for probe in value.leaked(audited)] == []


@PROPERTY
@given(st.randoms(use_true_random=False))
def test_the_counts_are_of_what_was_replaced_and_the_input_is_left_as_it_was(rng):
    planted = planted_document(rng, size=rng.randrange(1, 16))
    before = json.dumps(planted.document, sort_keys=True)

    read = rules.redacted_context(DECISION, planted.document, erased_at=None, redaction=DEFAULT_RULES)

    assert json.dumps(planted.document, sort_keys=True) == before
    placeholders = [p for text in strings_in(read.context) for p in _placeholders(text)]
    # Every placeholder written is a replacement counted under its kind
    # (rounded coordinates are counted too, and write no placeholder).
    for kind in {kind for kind, _ in placeholders}:
        assert read.redacted.get(kind, 0) >= sum(1 for k, _ in placeholders if k == kind)
    if planted.personal:
        assert sum(read.redacted.values()) > 0


def _placeholders(text):
    return [(m.group(1), m.group(0)) for m in re.finditer(r"<([a-z][a-z0-9_]*)#\d+>", text)]


def test_a_context_reads_as_the_model_is_sent_it():
    context = {
        "customer_name": "Ramesh Kumar",
        "drop": {"lat": 12.971598, "lng": 77.594566},
        "reason": "call 9845012345",
    }

    read = rules.redacted_context(DECISION, context, erased_at=None, redaction=DEFAULT_RULES)

    assert read.context == {
        "customer_name": "<person#1>",
        "drop": {"lat": 12.97, "lng": 77.59},
        "reason": "call <phone#1>",
    }
    assert read.redacted == {"coordinate": 2, "person": 1, "phone": 1}


def test_configured_rules_apply_as_in_the_playground():
    redaction = RedactionRules.build(extra_keys=["guardian"], extra_patterns={"locker": r"LKR-\d{3}"})

    read = rules.redacted_context(
        DECISION, {"guardian": "anyone", "drop": "locker LKR-042"}, erased_at=None, redaction=redaction
    )

    assert read.context == {"guardian": "<guardian#1>", "drop": "locker <locker#1>"}
    assert read.redacted == {"guardian": 1, "locker": 1}


def test_an_erased_context_is_gone_and_its_read_still_audited():
    erased_at = datetime(2026, 3, 1, tzinfo=UTC)

    read = rules.redacted_context(DECISION, {}, erased_at=erased_at, redaction=DEFAULT_RULES)
    audit = rules.context_read_audit(read, audit_id=uuid.uuid4())
    message = codec.context_to_proto(read)

    assert (read.context, dict(read.redacted)) == ({}, {})
    assert message.HasField("erased_at") and json.loads(message.context_json) == {}
    assert (audit.entity, audit.entity_id, audit.field) == ("decision", str(DECISION), "context_read")
    assert audit.new == {"redacted": {}, "erased": True}


def test_each_read_is_its_own_audit_row():
    read = rules.redacted_context(DECISION, {"phone": "9845012345"}, erased_at=None, redaction=DEFAULT_RULES)

    first, second = (rules.context_read_audit(read, audit_id=uuid.uuid4()) for _ in range(2))

    assert first.request_id != second.request_id
    assert first.new == {"redacted": {"phone": 1}, "erased": False}
