"""The rule table of hear_gym.envs.hear2act.user.engine, case by case and as properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction, ReactionKind, UserEngine
from hear_gym.envs.hear2act.user.states import ConcernState, Feedback, InteractionSatisfaction

RECOMMEND = lambda o: AssistantAction(ActionKind.RECOMMEND, option=o)  # noqa: E731
CONFIRM = AssistantAction(ActionKind.CONFIRM)
ASK = AssistantAction(ActionKind.ASK)


def option_with(scenario, satisfies, role="pattern"):
    return next(c.option_id for c in scenario.candidates if c.satisfies == satisfies and c.role == role)


@pytest.mark.parametrize("feedback", list(Feedback))
def test_reactions_follow_the_rule_table(airline, feedback):
    engine = UserEngine(airline, feedback)
    explicit = feedback is Feedback.EXPLICIT
    state, opening = engine.open()
    assert opening.kind is ReactionKind.STATE_REQUIREMENT and opening.disclosed == ("L1",)
    assert not opening.assents

    cases = {
        (True, False, True): (
            ReactionKind.CONCERN_DIRECTION if explicit else ReactionKind.SHARED_ASSENT,
            ConcernState.VOICED_CONCERN if explicit else ConcernState.RELUCTANT_ACCEPTANCE,
        ),
        (True, True, False): (
            ReactionKind.ASSENT_MILD_CONCERN if explicit else ReactionKind.SHARED_ASSENT,
            ConcernState.RELUCTANT_ACCEPTANCE,
        ),
        (True, True, True): (
            ReactionKind.GENUINE_ACCEPT if explicit else ReactionKind.SHARED_ASSENT,
            ConcernState.GENUINE_ACCEPTANCE,
        ),
        (False, False, False): (ReactionKind.STATE_REQUIREMENT, ConcernState.REJECTION),
    }
    for satisfies, (kind, graded) in cases.items():
        reaction = engine.react_to_recommendation(option_with(airline, satisfies), frozenset())
        assert (reaction.kind, reaction.state) == (kind, graded), satisfies
    over = next(c.option_id for c in airline.candidates if c.role == "violates_visible")
    assert engine.react_to_recommendation(over, frozenset()).kind is ReactionKind.REJECT_BUDGET
    # L1 alone, first time: a voiced concern; once disclosed, ignoring it is a rejection.
    l1_only = option_with(airline, (False, True, True))
    assert engine.react_to_recommendation(l1_only, frozenset()).state is ConcernState.VOICED_CONCERN
    assert engine.react_to_recommendation(l1_only, frozenset({"L1"})).state is ConcernState.REJECTION


def test_prosody_hides_soft_concerns_explicit_states_them(airline):
    for feedback, disclosed in ((Feedback.PROSODY, {"L1"}), (Feedback.EXPLICIT, {"L1", "L2"})):
        engine = UserEngine(airline, feedback)
        state, _ = engine.open()
        state, _ = engine.respond(state, RECOMMEND(option_with(airline, (True, False, True))))
        assert set(state.disclosed) == disclosed


def test_confirm_ends_only_after_assent_in_words(airline):
    engine = UserEngine(airline, Feedback.PROSODY)
    state, _ = engine.open()
    state, reaction = engine.respond(state, CONFIRM)
    assert reaction.kind is ReactionKind.CONFIRM_DECLINED and not state.ended
    reluctant = option_with(airline, (True, True, False))
    state, _ = engine.respond(state, RECOMMEND(reluctant))
    state, reaction = engine.respond(state, CONFIRM)
    assert reaction.kind is ReactionKind.CONFIRM_ACCEPTED and state.ended  # premature closure
    assert state.current_option == reluctant


def test_questions(airline):
    engine = UserEngine(airline, Feedback.PROSODY)
    state, _ = engine.open()
    l2 = airline.concern("L2").attribute
    state, reaction = engine.respond(state, AssistantAction(ActionKind.ASK, attribute=l2))
    assert reaction.kind is ReactionKind.ANSWER_REQUIREMENT and reaction.disclosed == ("L2",)
    state, again = engine.respond(state, AssistantAction(ActionKind.ASK, attribute=l2))
    assert again.kind is ReactionKind.ANSWER_REQUIREMENT and again.disclosed == ()
    other = next(
        d.key
        for d in domain_by_id(airline.domain).concern_dimensions
        if d.key not in {c.attribute for c in airline.concerns}
    )
    _, reaction = engine.respond(state, AssistantAction(ActionKind.ASK, attribute=other))
    assert reaction.kind is ReactionKind.ANSWER_NOT_IMPORTANT and reaction.disclosed == ()
    state, _ = engine.respond(state, RECOMMEND(option_with(airline, (True, True, False))))
    state, reaction = engine.respond(state, ASK)
    assert (reaction.kind, reaction.level) == (ReactionKind.ANSWER_DIRECTION, "L3")
    state, _ = engine.respond(state, RECOMMEND(airline.gold_option))
    _, reaction = engine.respond(state, ASK)
    assert reaction.kind is ReactionKind.ANSWER_HAPPY


CLARIFY = AssistantAction(ActionKind.CLARIFY)


def test_clarify_is_lexical_only_under_explicit_feedback(airline):
    reluctant = option_with(airline, (True, True, False))
    for feedback in Feedback:
        engine = UserEngine(airline, feedback)
        state, _ = engine.open()  # the opening misses L1: said in words, so the reply says so too
        _, reaction = engine.respond(state, CLARIFY)
        assert reaction.kind is ReactionKind.CLARIFY_UNRESOLVED and not reaction.assents
        replies = {}
        for option in (reluctant, airline.gold_option):
            state, _ = engine.respond(state, RECOMMEND(option))
            after, replies[option] = engine.respond(state, CLARIFY)
            assert after == state and replies[option].state is state.current_state
        if feedback is Feedback.PROSODY:  # same words for both; only the delivery differs
            assert {r.kind for r in replies.values()} == {ReactionKind.SHARED_ASSENT}
            assert all(r.assents for r in replies.values())
        else:
            assert replies[reluctant].kind is ReactionKind.CLARIFY_UNRESOLVED
            assert replies[airline.gold_option].kind is ReactionKind.CLARIFY_RESOLVED
        assert not replies[reluctant].state.resolved and replies[airline.gold_option].state.resolved


def test_interaction_satisfaction(airline):
    engine = UserEngine(airline, Feedback.PROSODY)
    state, opening = engine.open()
    assert opening.interaction_satisfaction is InteractionSatisfaction.NEUTRAL
    _, repeat = engine.respond(state, RECOMMEND(airline.opening_option))
    assert repeat.interaction_satisfaction is InteractionSatisfaction.ANNOYED  # rejected before
    _, breaks = engine.respond(state, RECOMMEND(option_with(airline, (False, False, False))))
    assert breaks.interaction_satisfaction is InteractionSatisfaction.ANNOYED  # L1 was stated
    _, good = engine.respond(state, RECOMMEND(option_with(airline, (True, False, False))))
    assert good.interaction_satisfaction is InteractionSatisfaction.APPRECIATIVE


# -- properties over random scenarios and action sequences ------------------------------
actions = st.one_of(
    st.builds(RECOMMEND, st.integers(1, 11)),
    st.just(CONFIRM),
    st.just(ASK),
    st.just(AssistantAction(ActionKind.CLARIFY)),
    st.sampled_from(range(8)).map(lambda i: ("slot", i)),
)
scenarios = st.sampled_from(scenario_bank())


def _concrete(action, scenario):
    if isinstance(action, tuple):
        dims = domain_by_id(scenario.domain).concern_dimensions
        return AssistantAction(ActionKind.ASK, attribute=dims[action[1] % len(dims)].key)
    return action


@settings(max_examples=150, deadline=None)
@given(scenarios, st.sampled_from(list(Feedback)), st.lists(actions, max_size=25))
def test_properties_of_any_dialogue(scenario, feedback, sequence):
    engine = UserEngine(scenario, feedback)
    state, _ = engine.open()
    for raw in sequence:
        if state.ended:
            break
        action = _concrete(raw, scenario)
        before = state
        state, reaction = engine.respond(state, action)
        # Disclosure only grows, and only through a permitted channel.
        assert before.disclosed <= state.disclosed
        for level in set(state.disclosed) - set(before.disclosed):
            if action.kind is ActionKind.RECOMMEND:
                violated = engine.violated_levels(action.option)
                assert level in violated
                if level != "L1":
                    assert feedback is Feedback.EXPLICIT  # prosody never words a soft concern
            else:
                assert action.kind is ActionKind.ASK
        if action.kind is ActionKind.CONFIRM:
            assert state.ended == before.current_assented  # unaccepted confirms never end it
        else:
            assert not state.ended
        if feedback is Feedback.PROSODY and action.kind is ActionKind.RECOMMEND and reaction.assents:
            assert reaction.kind is ReactionKind.SHARED_ASSENT


@settings(max_examples=100, deadline=None)
@given(scenarios, st.sampled_from(list(Feedback)), st.lists(actions, max_size=15))
def test_gold_is_always_reachable(scenario, feedback, prefix):
    engine = UserEngine(scenario, feedback)
    state, _ = engine.open()
    for raw in prefix:
        action = _concrete(raw, scenario)
        if action.kind is ActionKind.CONFIRM:
            continue
        state, _ = engine.respond(state, action)
    state, reaction = engine.respond(state, RECOMMEND(scenario.gold_option))
    assert reaction.state is ConcernState.GENUINE_ACCEPTANCE
    state, _ = engine.respond(state, CONFIRM)
    assert state.ended and state.current_option == scenario.gold_option


@settings(max_examples=60, deadline=None)
@given(scenarios, st.sampled_from(list(Feedback)), st.lists(actions, max_size=25))
def test_a_kept_engine_reacts_as_a_new_one(scenario, feedback, sequence):
    """An engine keeps its reactions to recommendations and its opening (an env keeps its engines
    across episodes): every reaction equals what a new engine, which has kept nothing, gives in
    the same state. A key that missed something a reaction depends on would fail here."""
    kept = UserEngine(scenario, feedback)
    for _ in range(2):  # the second dialogue finds what the first one kept
        state, opening = kept.open()
        assert (state, opening) == UserEngine(scenario, feedback).open()
        for raw in sequence:
            if state.ended:
                break
            action = _concrete(raw, scenario)
            expected = UserEngine(scenario, feedback).respond(state, action)
            state, reaction = kept.respond(state, action)
            assert (state, reaction) == expected
