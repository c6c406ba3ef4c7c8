import uuid
from dataclasses import replace

import pytest

from services.outcomes.rules.credit import (
    ABANDONED_BOOST,
    CIRCLE_CONFIDENCE,
    DRIFT_CONFIDENCE,
    RECOVERED_DISCOUNT,
    RESOLUTION_BY_TERMINAL,
    Arm,
    AssistantTurnOutcome,
    Conversation,
    ConversationMetrics,
    Credit,
    CreditAssignment,
    DeferredTurn,
    MalformedConversation,
    Resolution,
    Role,
    RolloutArm,
    Turn,
    TurnCredit,
    TurnOutcome,
    assign_credit,
    assign_credit_from_outcomes,
    classify_turns,
    content_word_overlap,
    content_words,
    conversation_metrics,
    parse_conversation,
)


def user(text: str, ref: str) -> Turn:
    return Turn(role=Role.USER, text=text, ref=ref)


def reply(text: str, ref: str, model: str) -> Turn:
    return Turn(role=Role.ASSISTANT, text=text, ref=ref, model=model, trace_id=f"trace-{ref}")


def credit_turns(*turns: Turn) -> CreditAssignment:
    return assign_credit(Conversation(conversation_id="c-1", turns=turns))


def credits_of(*turns: Turn) -> tuple[TurnCredit, ...]:
    return credit_turns(*turns).credits


def by_ref(credits: tuple[TurnCredit, ...], ref: str) -> TurnCredit:
    (found,) = [credit for credit in credits if credit.turn_ref == ref]
    return found


def outcomes_of(*turns: Turn) -> list[tuple[str, TurnOutcome, float]]:
    return [(o.turn_ref, o.outcome, o.confidence) for o in classify_turns(turns)]


# ─── the episode model's scenarios ──────────────────────────────────────────


def test_one_answer_and_silence_is_a_resolved_success():
    credits = credits_of(user("what's 2+2", "u1"), reply("4", "t1", "m1"))
    assert len(credits) == 1
    assert credits[0].credit is Credit.SUCCESS
    assert credits[0].resolution is Resolution.RESOLVED
    assert credits[0].episode_id == 0


def test_a_recovery_debits_the_corrected_model_and_credits_the_resolver():
    credits = credits_of(
        user("convert to async", "u1"),
        reply("threaded version", "t1", "m1"),
        user("no, that's not what i asked, i said async", "u2"),
        reply("async version", "t2", "m2"),
        user("thanks, now add tests", "u3"),
        reply("tests added", "t3", "m2"),
    )
    corrected, resolver, follow_up = by_ref(credits, "t1"), by_ref(credits, "t2"), by_ref(credits, "t3")
    assert corrected.credit is Credit.FAILURE
    assert corrected.model == "m1"
    assert corrected.confidence < CIRCLE_CONFIDENCE
    assert corrected.resolution is Resolution.RESOLVED
    assert resolver.credit is Credit.SUCCESS
    assert resolver.model == "m2"
    assert corrected.episode_id == resolver.episode_id
    assert follow_up.episode_id > resolver.episode_id
    assert follow_up.credit is Credit.SUCCESS


def test_an_abandoned_loop_debits_every_attempt_boosted_and_capped():
    credits = credits_of(
        user("fix the deploy", "u1"),
        reply("attempt 1", "t1", "m1"),
        user("no that's wrong", "u2"),
        reply("attempt 2", "t2", "m1"),
        user("forget it, this is useless", "u3"),
    )
    assert [c.turn_ref for c in credits] == ["t1", "t2"]
    assert all(c.credit is Credit.FAILURE for c in credits)
    assert all(c.resolution is Resolution.ABANDONED for c in credits)
    assert all(c.confidence <= 1.0 for c in credits)
    assert by_ref(credits, "t1").confidence > CIRCLE_CONFIDENCE
    assert by_ref(credits, "t2").confidence == 1.0


def test_a_repair_attempt_met_by_silence_is_deferred():
    assignment = credit_turns(
        user("fix the test", "u1"),
        reply("attempt 1", "t1", "m1"),
        user("that didn't work, still failing", "u2"),
        reply("attempt 2 (maybe fixed)", "t2", "m1"),
    )
    assert [(c.turn_ref, c.credit) for c in assignment.credits] == [("t1", Credit.FAILURE)]
    assert assignment.deferred == (
        DeferredTurn(conversation_id="c-1", turn_ref="t2", model="m1", trace_id="trace-t2", episode_id=0),
    )


def test_each_credit_and_deferred_turn_carries_the_arm_its_turn_answered_under():
    rollout = uuid.UUID("2b0c8f2e-0a43-4a4e-9b52-1d8f1f7a3c11")
    candidate, control = RolloutArm(rollout, Arm.CANDIDATE), RolloutArm(rollout, Arm.CONTROL)
    assignment = credit_turns(
        user("fix the test", "u1"),
        replace(reply("attempt 1", "t1", "m1"), rollout=candidate),
        user("that didn't work, still failing", "u2"),
        replace(reply("attempt 2 (maybe fixed)", "t2", "m1"), rollout=control),
    )
    assert [(c.turn_ref, c.rollout) for c in assignment.credits] == [("t1", candidate)]
    assert [(d.turn_ref, d.rollout) for d in assignment.deferred] == [("t2", control)]
    unstamped = credit_turns(user("fix the test", "u1"), reply("done, fixed", "t1", "m1"), user("thanks!", "u2"))
    assert [c.rollout for c in unstamped.credits] == [None]


def test_a_loop_that_stops_on_a_correction_is_ongoing():
    credits = credits_of(
        user("do X", "u1"),
        reply("wrong 1", "t1", "m1"),
        user("no, try again", "u2"),
        reply("wrong 2", "t2", "m1"),
        user("still wrong, that failed", "u3"),
    )
    assert len(credits) == 2
    assert all(c.credit is Credit.FAILURE for c in credits)
    assert all(c.resolution is Resolution.ONGOING for c in credits)
    assert all(c.confidence == CIRCLE_CONFIDENCE for c in credits)


def test_distinct_intents_are_separate_episodes():
    credits = credits_of(
        user("question one", "u1"),
        reply("answer one", "t1", "m1"),
        user("unrelated question two", "u2"),
        reply("answer two", "t2", "m1"),
    )
    assert len(credits) == 2
    assert credits[0].episode_id != credits[1].episode_id
    assert all(c.credit is Credit.SUCCESS for c in credits)


def test_an_empty_conversation_is_safe():
    assert credit_turns() == CreditAssignment(credits=(), deferred=())
    assert conversation_metrics([], pending=0) == ConversationMetrics()


def test_metrics_of_a_one_shot_answer():
    metrics = conversation_metrics(credits_of(user("what's 2+2", "u1"), reply("4", "t1", "m1")), pending=0)
    assert metrics.episodes == 1
    assert metrics.resolved == 1
    assert metrics.first_turn_resolutions == 1
    assert metrics.first_turn_resolution_rate == pytest.approx(1.0)
    assert metrics.avg_turns_to_resolution == pytest.approx(1.0)
    assert metrics.churn_rate == pytest.approx(0.0)


def test_metrics_count_attempts_to_resolution_across_episodes():
    metrics = conversation_metrics(
        credits_of(
            user("convert to async", "u1"),
            reply("threaded", "t1", "m1"),
            user("no, that's not what i asked", "u2"),
            reply("async", "t2", "m2"),
            user("thanks, now a new question", "u3"),
            reply("answer", "t3", "m2"),
        ),
        pending=0,
    )
    assert metrics.resolved == 2
    assert metrics.first_turn_resolutions == 1
    assert metrics.avg_turns_to_resolution == pytest.approx(1.5)
    assert metrics.first_turn_resolution_rate == pytest.approx(0.5)


def test_metrics_an_ongoing_loop_is_neither_resolved_nor_churn():
    metrics = conversation_metrics(
        credits_of(
            user("do X", "u1"),
            reply("wrong", "t1", "m1"),
            user("no, try again", "u2"),
            reply("wrong2", "t2", "m1"),
            user("still wrong, that failed", "u3"),
        ),
        pending=0,
    )
    assert (metrics.episodes, metrics.ongoing, metrics.resolved, metrics.abandoned) == (1, 1, 0, 0)
    assert metrics.churn_rate == pytest.approx(0.0)


def test_metrics_abandonment_is_churn():
    metrics = conversation_metrics(
        credits_of(
            user("fix it", "u1"),
            reply("attempt", "t1", "m1"),
            user("no that's wrong", "u2"),
            reply("attempt2", "t2", "m1"),
            user("forget it, useless", "u3"),
        ),
        pending=0,
    )
    assert (metrics.episodes, metrics.abandoned, metrics.resolved) == (1, 1, 0)
    assert metrics.churn_rate == pytest.approx(1.0)


def test_resolved_and_abandoned_episodes_coexist():
    credits = credits_of(
        user("q1", "u1"),
        reply("ans1", "t1", "m1"),
        user("thanks, now fix the deploy", "u2"),
        reply("attempt", "t2", "m1"),
        user("no that's wrong", "u3"),
        reply("attempt2", "t3", "m1"),
        user("forget it, useless", "u4"),
    )
    first, second, third = by_ref(credits, "t1"), by_ref(credits, "t2"), by_ref(credits, "t3")
    assert (first.resolution, first.credit) == (Resolution.RESOLVED, Credit.SUCCESS)
    assert second.resolution is Resolution.ABANDONED
    assert third.resolution is Resolution.ABANDONED
    assert first.episode_id != second.episode_id
    assert second.episode_id == third.episode_id


def test_every_correction_before_an_ambiguous_end_is_emitted():
    assignment = credit_turns(
        user("fix the test", "u1"),
        reply("attempt 1", "t1", "m1"),
        user("no, that's wrong", "u2"),
        reply("attempt 2", "t2", "m1"),
        user("still failing, didn't work", "u3"),
        reply("attempt 3 (maybe)", "t3", "m1"),
    )
    assert [(c.turn_ref, c.credit) for c in assignment.credits] == [
        ("t1", Credit.FAILURE),
        ("t2", Credit.FAILURE),
    ]
    assert [d.turn_ref for d in assignment.deferred] == ["t3"]


def test_discount_and_boost_are_exact():
    recovered = credits_of(
        user("convert to async", "u1"),
        reply("threaded", "t1", "m1"),
        user("no, that's not what i asked", "u2"),
        reply("async", "t2", "m2"),
        user("thanks, new question", "u3"),
        reply("answer", "t3", "m2"),
    )
    assert by_ref(recovered, "t1").confidence == 0.85 * 0.7
    abandoned = credits_of(
        user("fix it", "u1"),
        reply("attempt", "t1", "m1"),
        user("no that's wrong", "u2"),
        reply("attempt2", "t2", "m1"),
        user("forget it, useless", "u3"),
    )
    assert by_ref(abandoned, "t1").confidence == 0.85 * 1.15
    assert all(c.confidence <= 1.0 for c in abandoned)


def test_the_episode_id_advances_past_a_deferred_end():
    assignment = credit_turns(
        user("q1", "u1"),
        reply("a1", "t1", "m1"),
        user("now fix the bug", "u2"),
        reply("fix1", "t2", "m1"),
        user("still broken, didn't work", "u3"),
        reply("fix2", "t3", "m1"),
    )
    assert by_ref(assignment.credits, "t1").episode_id == 0
    assert by_ref(assignment.credits, "t2").episode_id == 1
    assert [(d.turn_ref, d.episode_id) for d in assignment.deferred] == [("t3", 1)]


def test_the_model_constants():
    assert CIRCLE_CONFIDENCE == 0.85
    assert RECOVERED_DISCOUNT == 0.7
    assert ABANDONED_BOOST == 1.15


# ─── the turn classifier ────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "answer",
    [
        "no",
        "No, that's not it",
        "nope",
        "that's wrong",
        "thats wrong",
        "That\u2019s wrong",
        "not what i asked",
        "it didn't work",
        "did not work either",
        "still failing on CI",
        "still wrong",
        "try again",
        "still broken",
        "that's not exactly what i meant",
    ],
)
def test_a_repair_marker_makes_the_previous_turn_a_circle(answer):
    outcomes = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user(answer, "u2"))
    assert outcomes == [("t1", TurnOutcome.CIRCLE, 0.85)]


@pytest.mark.parametrize(
    "answer",
    [
        "forget it",
        "this is useless",
        "never mind",
        "nevermind, i'll do it myself",
        "i give up",
        "no, forget it",
        "ok whatever, useless",
    ],
)
def test_explicit_abandonment_is_a_frustrated_exit(answer):
    ((_, outcome, confidence),) = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user(answer, "u2"))
    assert outcome is TurnOutcome.FRUSTRATED_EXIT
    assert confidence > CIRCLE_CONFIDENCE


@pytest.mark.parametrize(
    "answer",
    [
        "now write the changelog",
        "thanks!",
        "no problem, next: the docs",
        "no worries",
        "no rush, also add logging",
        "remove the useless imports too",
        "what is a good name for it",
        "how does the router know",
    ],
)
def test_a_new_request_or_an_acknowledgement_advances(answer):
    ((_, outcome, _),) = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user(answer, "u2"))
    assert outcome is TurnOutcome.ADVANCE


def test_an_acknowledgement_is_stronger_evidence_than_a_silent_move_on():
    thanked = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user("great, thanks", "u2"))
    moved_on = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user("now the docs", "u2"))
    assert thanked[0][2] > moved_on[0][2]


def test_silence_after_a_first_attempt_is_a_clean_exit_and_after_a_repair_ambiguous():
    assert outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"))[0][1] is TurnOutcome.CLEAN_EXIT
    outcomes = outcomes_of(user("fix it", "u1"), reply("a", "t1", "m1"), user("no", "u2"), reply("b", "t2", "m1"))
    assert [o[1] for o in outcomes] == [TurnOutcome.CIRCLE, TurnOutcome.AMBIGUOUS_EXIT]


def test_an_assistant_turn_before_any_request_is_no_attempt():
    assignment = credit_turns(
        reply("hello, how can I help?", "t0", "m1"), user("fix it", "u1"), reply("done", "t1", "m1")
    )
    assert [c.turn_ref for c in assignment.credits] == ["t1"]
    assert assignment.deferred == ()


def test_every_terminal_outcome_maps_to_a_resolution():
    assert set(RESOLUTION_BY_TERMINAL) == set(TurnOutcome)


# ─── topic drift after defeat ───────────────────────────────────────────────

DEFEAT = (
    user("convert the upload handler to async", "u1"),
    reply("threaded version", "t1", "m1"),
    user("no, that's not what i asked, i said async", "u2"),
    reply("async version", "t2", "m2"),
)


def test_a_pivot_after_a_correction_is_not_credited_as_recovery():
    credits = credits_of(*DEFEAT, user("what is the capital of france", "u3"), reply("paris", "t3", "m2"))
    corrected, last_attempt, pivot = by_ref(credits, "t1"), by_ref(credits, "t2"), by_ref(credits, "t3")
    assert last_attempt.credit is Credit.FAILURE
    assert last_attempt.confidence == DRIFT_CONFIDENCE
    assert last_attempt.resolution is Resolution.ABANDONED
    # No boost: the user never said the loop failed them.
    assert corrected.confidence == CIRCLE_CONFIDENCE
    assert corrected.resolution is Resolution.ABANDONED
    assert corrected.episode_id == last_attempt.episode_id
    # The pivot opens an episode of its own, judged on its own merits.
    assert pivot.episode_id == last_attempt.episode_id + 1
    assert (pivot.credit, pivot.resolution) == (Credit.SUCCESS, Resolution.RESOLVED)


def test_a_pivot_is_weaker_evidence_than_explicit_abandonment():
    drifted = credits_of(*DEFEAT, user("what is the capital of france", "u3"))
    abandoned = credits_of(*DEFEAT, user("forget it", "u3"))
    assert all(d.confidence < a.confidence for d, a in zip(drifted, abandoned, strict=True))


def test_an_acknowledged_recovery_is_still_credited():
    credits = credits_of(*DEFEAT, user("perfect, what is the capital of france", "u3"))
    assert by_ref(credits, "t2").credit is Credit.SUCCESS
    assert by_ref(credits, "t1").confidence == 0.85 * 0.7


def test_continuing_the_same_intent_is_still_credited_as_recovery():
    credits = credits_of(*DEFEAT, user("now make the async upload handler retry", "u3"))
    last_attempt = by_ref(credits, "t2")
    assert (last_attempt.credit, last_attempt.resolution) == (Credit.SUCCESS, Resolution.RESOLVED)


def test_the_drift_check_only_follows_a_correction():
    credits = credits_of(
        user("convert the upload handler to async", "u1"),
        reply("async version", "t1", "m1"),
        user("what is the capital of france", "u2"),
    )
    assert by_ref(credits, "t1").credit is Credit.SUCCESS


def test_the_similarity_is_replaceable():
    def always_same(reply_text, earlier):
        return 1.0

    def never_same(reply_text, earlier):
        return 0.0

    pivot = (*DEFEAT, user("now make the async upload handler retry", "u3"))
    lenient = assign_credit(Conversation("c-1", pivot), similarity=always_same).credits
    strict = assign_credit(Conversation("c-1", pivot), similarity=never_same).credits
    assert by_ref(lenient, "t2").credit is Credit.SUCCESS
    assert by_ref(strict, "t2").credit is Credit.FAILURE


def test_the_similarity_sees_every_request_of_the_episode():
    seen = []

    def recording(reply_text, earlier):
        seen.append((reply_text, tuple(earlier)))
        return 1.0

    classify_turns((*DEFEAT, user("next topic", "u3")), similarity=recording)
    assert seen == [
        ("next topic", ("convert the upload handler to async", "no, that's not what i asked, i said async"))
    ]


def test_content_words_drop_filler_and_fold_plurals():
    assert content_words("Now please add the tests for this, thanks!") == frozenset({"add", "test"})


def test_content_word_overlap():
    earlier = ["convert the upload handler to async"]
    assert content_word_overlap("retry the async upload", earlier) == pytest.approx(2 / 3)
    assert content_word_overlap("capital of france", earlier) == 0.0
    assert content_word_overlap("and then?", earlier) == 1.0


# ─── a conversation that grows ──────────────────────────────────────────────


def test_a_deferred_turn_is_credited_under_the_same_episode_once_settled():
    start = (
        user("q1", "u1"),
        reply("a1", "t1", "m1"),
        user("now fix the bug", "u2"),
        reply("fix1", "t2", "m1"),
        user("still broken", "u3"),
        reply("fix2", "t3", "m1"),
    )
    before = credit_turns(*start)
    after = credit_turns(*start, user("works now, thanks", "u4"))
    (waiting,) = before.deferred
    settled = by_ref(after.credits, "t3")
    assert (settled.episode_id, settled.credit) == (waiting.episode_id, Credit.SUCCESS)
    assert after.deferred == ()
    # Keys already emitted are emitted again unchanged, so a ledger keyed on
    # (turn_ref, episode_id) adds exactly the settled turn and nothing twice.
    before_keys = {(c.turn_ref, c.episode_id) for c in before.credits}
    after_keys = {(c.turn_ref, c.episode_id) for c in after.credits}
    assert after_keys - before_keys == {("t3", waiting.episode_id)}
    assert before_keys <= after_keys


def test_assigning_from_outcomes_keeps_their_order_and_attribution():
    outcomes = [
        AssistantTurnOutcome("t1", "m1", None, TurnOutcome.CIRCLE, 0.85),
        AssistantTurnOutcome("t2", "m2", "tr", TurnOutcome.ADVANCE, 0.7),
        AssistantTurnOutcome("t3", None, None, TurnOutcome.CIRCLE, 0.85),
    ]
    assignment = assign_credit_from_outcomes(outcomes, conversation_id="c-9")
    assert [(c.turn_ref, c.model, c.trace_id, c.credit, c.episode_id, c.resolution) for c in assignment.credits] == [
        ("t1", "m1", None, Credit.FAILURE, 0, Resolution.RESOLVED),
        ("t2", "m2", "tr", Credit.SUCCESS, 0, Resolution.RESOLVED),
        ("t3", None, None, Credit.FAILURE, 1, Resolution.ONGOING),
    ]
    assert all(c.conversation_id == "c-9" for c in assignment.credits)


def test_a_credit_serialises_to_the_contract_shape():
    (credit,) = credits_of(user("what's 2+2", "u1"), reply("4", "t1", "m1"))
    assert credit.to_json() == {
        "turn_ref": "t1",
        "model": "m1",
        "trace_id": "trace-t1",
        "credit": "success",
        "confidence": 0.6,
        "episode_id": 0,
        "resolution": "resolved",
    }


# ─── metrics across conversations ───────────────────────────────────────────


def test_metrics_keep_equal_episode_ids_of_different_conversations_apart():
    one = assign_credit(Conversation("c-1", (user("q", "u1"), reply("a", "t1", "m1")))).credits
    two = assign_credit(Conversation("c-2", (user("q", "v1"), reply("a", "s1", "m1")))).credits
    metrics = conversation_metrics([*one, *two], pending=0)
    assert metrics.episodes == 2
    assert metrics.first_turn_resolutions == 2


def test_metrics_report_the_pending_count_they_are_given():
    assert conversation_metrics([], pending=3).pending == 3
    with pytest.raises(ValueError, match="pending"):
        conversation_metrics([], pending=-1)


# ─── parsing ────────────────────────────────────────────────────────────────


def test_a_conversation_payload_parses():
    conversation = parse_conversation(
        {
            "conversation_id": "c-1",
            "turns": [
                {"role": "user", "text": "fix it", "ref": "u1"},
                {"role": "assistant", "text": "done", "ref": "t1", "model": "m1", "trace_id": "x"},
            ],
        }
    )
    assert conversation == Conversation("c-1", (user("fix it", "u1"), Turn(Role.ASSISTANT, "done", "t1", "m1", "x")))


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ([], "payload"),
        ({"turns": []}, "conversation_id"),
        ({"conversation_id": " ", "turns": []}, "conversation_id"),
        ({"conversation_id": "c", "turns": "hi"}, "turns"),
        ({"conversation_id": "c"}, "turns"),
        ({"conversation_id": "c", "turns": ["hi"]}, "turns[0]"),
        ({"conversation_id": "c", "turns": [{"role": "system", "text": "", "ref": "r"}]}, "turns[0].role"),
        ({"conversation_id": "c", "turns": [{"role": "user", "ref": "r"}]}, "turns[0].text"),
        ({"conversation_id": "c", "turns": [{"role": "user", "text": "x"}]}, "turns[0].ref"),
        ({"conversation_id": "c", "turns": [{"role": "user", "text": "x", "ref": ""}]}, "turns[0].ref"),
        (
            {"conversation_id": "c", "turns": [{"role": "assistant", "text": "x", "ref": "r", "model": 4}]},
            "turns[0].model",
        ),
        (
            {
                "conversation_id": "c",
                "turns": [{"role": "user", "text": "x", "ref": "r"}, {"role": "assistant", "text": "y", "ref": "r"}],
            },
            "turns[1].ref",
        ),
    ],
)
def test_a_bad_conversation_names_the_field(payload, field):
    with pytest.raises(MalformedConversation) as caught:
        parse_conversation(payload)
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)
