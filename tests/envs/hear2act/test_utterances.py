"""Every turn a scenario's user can say is listed ahead (``utterances.possible_turns``): what
``hear-gym render --turns all`` renders before a training run hears any of it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hear_gym  # noqa: F401
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.user.engine import Reaction, ReactionKind
from hear_gym.envs.hear2act.user.realizer import Wording
from hear_gym.envs.hear2act.user.states import ConcernState
from hear_gym.envs.hear2act.utterances import possible_turns

SCENARIOS = [s.scenario_id for s in scenarios_for("dev")[:3]]


def _heard(scenario_id: str, feedback: str, seed: int, episodes: int, **kwargs) -> set[tuple[str, str]]:
    """(text, delivery) of every user turn of random-policy episodes (valid actions only)."""
    env = gym.make("hear_gym/Hear2Act-v0", feedback=feedback, item_ids=[scenario_id], **kwargs)
    rng, heard = np.random.default_rng(seed), set()
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode, options={"item_id": scenario_id})
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        heard |= {(t["user_text"], t["delivery_label"]) for t in env.unwrapped.turns}
    return heard


@pytest.mark.parametrize("feedback", ["prosody", "explicit"])
@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_every_turn_a_policy_hears_is_listed(scenario_id, feedback):
    possible = set(possible_turns(get_scenario(scenario_id), feedback))
    heard = _heard(scenario_id, feedback, seed=7, episodes=40)
    assert len(heard) > 60  # the random policy reached many reactions
    assert heard <= possible, sorted(heard - possible)[:5]


def test_a_patient_users_last_words_are_listed():
    scenario = get_scenario(SCENARIOS[0])
    heard = _heard(SCENARIOS[0], "prosody", seed=3, episodes=30, patience=1)
    assert heard <= set(possible_turns(scenario, "prosody", patience=1))
    out_of_patience = {t for t, _ in heard} & set(
        Wording.of(scenario, domain_by_id(scenario.domain)).every_realization(
            Reaction(ReactionKind.OUT_OF_PATIENCE, ConcernState.GENUINE_ACCEPTANCE)
        )
    )
    assert out_of_patience  # the policy did run the user out of patience
    assert not {t for t, _ in possible_turns(scenario, "prosody")} & out_of_patience  # only with patience


def test_the_list_starts_with_the_request_and_holds_each_turn_once():
    scenario = get_scenario(SCENARIOS[1])
    turns = possible_turns(scenario, "prosody")
    assert turns[0] == (scenario.request, "neutral")
    assert len(turns) == len(set(turns))


def test_every_realization_is_what_the_realizer_draws():
    scenario = get_scenario(SCENARIOS[0])
    wording = Wording.of(scenario, domain_by_id(scenario.domain))
    reaction = Reaction(ReactionKind.CONCERN_DIRECTION, ConcernState.VOICED_CONCERN, level="L2")
    rng = np.random.default_rng(0)
    drawn = {wording.realize(reaction, rng) for _ in range(400)}
    assert drawn == set(wording.every_realization(reaction))
