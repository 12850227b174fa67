"""Hear2Act reward options against hand-computed values: success (the paper's 1st%), tiered
partial credit, turn cost, invalid-action penalty, and the user-patience extension."""

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.envs.hear2act.actions import ASK_GENERAL, CONFIRM, RECOMMEND0, AssistantKind, action_mask
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction, ReactionKind, UserEngine
from hear_gym.envs.hear2act.user.states import Feedback

T, F = True, False
# 0.5 [L1] + 0.3 [L2] + 0.2 [L3], worked out by hand for each pattern.
TIERED_BY_PATTERN = {
    (T, T, T): 1.0,
    (T, T, F): 0.8,
    (T, F, T): 0.7,
    (T, F, F): 0.5,
    (F, T, T): 0.5,
    (F, T, F): 0.3,
    (F, F, T): 0.2,
    (F, F, F): 0.0,
}


def _play(scenario, actions, **kwargs):
    env = gym.make("hear_gym/Hear2Act-v0", item_ids=[scenario.scenario_id], **kwargs)
    env.reset(seed=0)
    rewards = []
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("scenario", scenario_bank()[:3], ids=lambda s: s.scenario_id)
def test_tiered_credit_follows_the_hand_table(scenario):
    for option in scenario.candidates:
        _, info = _play(scenario, [RECOMMEND0 + option.option_id - 1] * 30, reward="tiered", max_turns=3)
        over = option.price > scenario.budget.max_price
        expected = 0.0 if over else TIERED_BY_PATTERN[option.satisfies]
        assert info["final_option"] == option.option_id
        assert info["episode"]["return"] == pytest.approx(expected)


def test_success_reward_turn_cost_and_invalid_penalty_add_up():
    scenario = scenario_bank()[0]
    gold = RECOMMEND0 + scenario.gold_option - 1
    # recommend gold, ask (general), confirm: three turns after the opening.
    rewards, info = _play(scenario, [gold, ASK_GENERAL, CONFIRM], turn_cost=0.05)
    assert info["success"] and rewards == pytest.approx([-0.05, -0.05, 0.95])
    assert info["episode"]["return"] == pytest.approx(0.85)
    # An action the mask rules out (a slot the domain lacks) is invalid: penalty plus turn cost.
    invalid = int(np.flatnonzero(action_mask(domain_by_id(scenario.domain), AssistantKind.TEXT) == 0)[0])
    rewards, info = _play(scenario, [invalid, gold, CONFIRM], turn_cost=0.05, invalid_action_penalty=-0.1)
    assert rewards[0] == pytest.approx(-0.15) and info["episode"]["return"] == pytest.approx(0.75)


def test_without_options_the_reward_is_the_papers_success():
    scenario = scenario_bank()[0]
    rewards, info = _play(scenario, [RECOMMEND0 + scenario.gold_option - 1, CONFIRM])
    assert rewards == [0.0, 1.0] and info["episode"]["return"] == 1.0


@pytest.mark.parametrize("feedback", list(Feedback))
def test_patience_ends_the_dialogue_after_n_elicitations_on_a_genuine_acceptance(feedback):
    scenario = scenario_bank()[0]
    engine = UserEngine(scenario, feedback, patience=2)
    state, _ = engine.open()
    # Elicitation on the (not genuinely accepted) opening option costs no patience.
    for _ in range(3):
        state, reaction = engine.respond(state, AssistantAction(ActionKind.ASK))
    assert not state.ended and state.patience_spent == 0
    state, _ = engine.respond(state, AssistantAction(ActionKind.RECOMMEND, option=scenario.gold_option))
    state, reaction = engine.respond(state, AssistantAction(ActionKind.CLARIFY))
    assert not state.ended and state.patience_spent == 1
    state, reaction = engine.respond(state, AssistantAction(ActionKind.ASK))
    assert state.ended and reaction.kind is ReactionKind.OUT_OF_PATIENCE
    assert state.current_option == scenario.gold_option
    # The paper's user never runs out of patience.
    paper = UserEngine(scenario, feedback)
    state, _ = paper.open()
    state, _ = paper.respond(state, AssistantAction(ActionKind.RECOMMEND, option=scenario.gold_option))
    for _ in range(10):
        state, _ = paper.respond(state, AssistantAction(ActionKind.ASK))
    assert not state.ended


def test_patience_in_the_env_terminates_on_the_current_option():
    scenario = scenario_bank()[0]
    rewards, info = _play(
        scenario, [RECOMMEND0 + scenario.gold_option - 1, ASK_GENERAL, ASK_GENERAL], patience=2
    )
    assert len(rewards) == 3 and info["episode"]["terminated"] and info["success"]
    assert info["turn_record"]["reaction"] == "out_of_patience"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"reward": "dense"}, "reward must be one of"),
        ({"turn_cost": -0.1}, "turn_cost"),
        ({"turn_cost": "0.1"}, "turn_cost"),
        ({"patience": 0}, "patience"),
        ({"patience": 1.5}, "patience"),
    ],
)
def test_bad_reward_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("hear_gym/Hear2Act-v0", **kwargs)
