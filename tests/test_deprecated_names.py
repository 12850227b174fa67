"""Names the previous release used, still read for one release, each with a DeprecationWarning
naming its replacement, and each playing exactly what its new name plays (CHANGELOG, Unreleased)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import hear_gym  # noqa: F401  (registers the ids)
from hear_gym.core.registry import family
from hear_gym.integrations.trl import environment_factory, episode_rows

HEAR2ACT = "hear_gym/Hear2Act-v0"
SCENARIO = "budget_airline_tickets-03"


def _first_observation(env, **options) -> tuple[str, str]:
    observation, info = env.reset(seed=4, options=options)
    return observation["transcript"], info["item_id"]


def test_hear2act_scenario_id_reset_option_plays_the_item():
    env = gym.make(HEAR2ACT, item_ids=[SCENARIO, "budget_airline_tickets-00"])
    expected = _first_observation(env, item_id=SCENARIO)
    with pytest.warns(DeprecationWarning, match="'scenario_id' is deprecated; use 'item_id'"):
        assert _first_observation(env, scenario_id=SCENARIO) == expected
    with pytest.raises(ValueError, match="twice"):
        env.reset(options={"item_id": SCENARIO, "scenario_id": SCENARIO})


def test_hear2act_scenario_ids_kwarg_builds_the_same_env():
    expected = _first_observation(gym.make(HEAR2ACT, item_ids=[SCENARIO]))
    with pytest.warns(DeprecationWarning, match="scenario_ids is deprecated; use item_ids"):
        env = gym.make(HEAR2ACT, scenario_ids=[SCENARIO])
    assert _first_observation(env) == expected
    with pytest.raises(ValueError, match="not both"):
        gym.make(HEAR2ACT, scenario_ids=[SCENARIO], item_ids=[SCENARIO])


def test_env_family_episode_ids_is_item_ids():
    env_family = family(HEAR2ACT)
    with pytest.warns(DeprecationWarning, match="use EnvFamily.item_ids"):
        assert env_family.episode_ids("dev") == env_family.item_ids("dev")


def test_trl_rows_naming_episode_id_start_that_item():
    Env = environment_factory(HEAR2ACT)
    expected = Env().reset(item_id=SCENARIO, seed=2)
    env = Env()
    with pytest.warns(DeprecationWarning, match="name it 'item_id'"):
        assert env.reset(episode_id=SCENARIO, seed=2) == expected
    assert env.item_id == SCENARIO
    with pytest.warns(DeprecationWarning, match="use item_ids="):
        old = episode_rows(HEAR2ACT, episode_ids=[SCENARIO])
    assert old == episode_rows(HEAR2ACT, [SCENARIO]) and old[0]["item_id"] == SCENARIO
