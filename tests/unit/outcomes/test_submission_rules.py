import hashlib
import json
import uuid

import pytest

from services.common.errors import Conflict
from services.outcomes.rules.credit import Arm, Role, RolloutArm, Turn
from services.outcomes.rules.submission import BookedConversation, Route, settle_route, turn_digest


def stored(skill=None, decision_type=None, digests=("x",)) -> BookedConversation:
    return BookedConversation(
        conversation_id="c-1", skill=skill, decision_type=decision_type, turn_digests=list(digests)
    )


def test_a_digest_changes_with_anything_a_credit_depends_on():
    base = Turn(role=Role.ASSISTANT, text="sent", ref="t1", model="m1", trace_id="tr-1")
    variants = [
        Turn(role=Role.USER, text="sent", ref="t1", model="m1", trace_id="tr-1"),
        Turn(role=Role.ASSISTANT, text="sent!", ref="t1", model="m1", trace_id="tr-1"),
        Turn(role=Role.ASSISTANT, text="sent", ref="t2", model="m1", trace_id="tr-1"),
        Turn(role=Role.ASSISTANT, text="sent", ref="t1", model="m2", trace_id="tr-1"),
        Turn(role=Role.ASSISTANT, text="sent", ref="t1", model="m1", trace_id=None),
    ]
    digests = {turn_digest(base), *(turn_digest(v) for v in variants)}
    assert len(digests) == 1 + len(variants)
    assert turn_digest(base) == turn_digest(
        Turn(role=Role.ASSISTANT, text="sent", ref="t1", model="m1", trace_id="tr-1")
    )


def test_an_arm_changes_the_digest_and_its_absence_keeps_the_digest_booked_before_arms():
    rollout = uuid.UUID("2b0c8f2e-0a43-4a4e-9b52-1d8f1f7a3c11")
    plain = Turn(role=Role.ASSISTANT, text="sent", ref="t1", model="m1", trace_id="tr-1")
    control = Turn(**{**_fields(plain), "rollout": RolloutArm(rollout, Arm.CONTROL)})
    candidate = Turn(**{**_fields(plain), "rollout": RolloutArm(rollout, Arm.CANDIDATE)})
    assert len({turn_digest(plain), turn_digest(control), turn_digest(candidate)}) == 3
    # The digest an armless turn was booked under before turns carried an arm.
    before = json.dumps(["assistant", "t1", "sent", "m1", "tr-1"], separators=(",", ":"))
    assert turn_digest(plain) == hashlib.blake2b(before.encode(), digest_size=16).hexdigest()


def _fields(turn: Turn) -> dict:
    return {name: getattr(turn, name) for name in ("role", "text", "ref", "model", "trace_id")}


def test_a_new_conversation_takes_the_route_it_is_given():
    assert settle_route(stored(digests=()), Route(skill="triage"), new=True) == Route(skill="triage")


@pytest.mark.parametrize(
    ("row", "given", "expected"),
    [
        (stored(skill="triage"), Route(), Route(skill="triage")),
        (stored(skill="triage"), Route(skill="triage"), Route(skill="triage")),
        (stored(decision_type="stall_response"), Route(), Route(decision_type="stall_response")),
        (stored(), Route(), Route()),
    ],
)
def test_a_booked_route_is_kept_when_repeated_or_omitted(row, given, expected):
    assert settle_route(row, given, new=False) == expected


@pytest.mark.parametrize(
    ("row", "given", "field"),
    [
        (stored(skill="triage"), Route(skill="billing"), "skill"),
        (stored(), Route(decision_type="stall_response"), "decision_type"),
    ],
)
def test_a_booked_route_never_changes(row, given, field):
    with pytest.raises(Conflict) as caught:
        settle_route(row, given, new=False)
    assert caught.value.code == "CONVERSATION_ROUTE_CHANGED"
    assert caught.value.details == {"field": field}
