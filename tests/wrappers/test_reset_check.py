"""A reset refused for its arguments leaves every registered env usable through ``gym.make``:
the next good reset plays, and so do its steps (Gymnasium's passive checker, which marks its
reset as checked before the env runs it, sits inside the check)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.core.registry import env_ids, family
from hear_gym.wrappers.reset_check import ResetArgumentCheck, check_seed


def bad_resets(env_id: str) -> list[dict]:
    """An unknown, a path-like and an empty episode id; a string, negative, bool and float seed;
    an unknown option and options that are not a dict."""
    reset_options = family(env_id).reset_options
    return [
        {"seed": 3, "options": reset_options("no-such-episode")},
        {"seed": 3, "options": reset_options("../../etc/passwd")},
        {"seed": 3, "options": reset_options("")},
        {"seed": "3"},
        {"seed": -1},
        {"seed": True},
        {"seed": 1.5},
        {"seed": 3, "options": {"no_such_option": 1}},
        {"seed": 3, "options": "item_id"},
    ]


def _legal(observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("env_id", env_ids())
def test_a_bad_first_reset_leaves_the_env_usable(env_id):
    for bad in bad_resets(env_id):
        env = gym.make(env_id, access="T")
        with pytest.raises((ValueError, KeyError, IndexError)):
            env.reset(**bad)
        observation, _ = env.reset(seed=3)
        observation, *_ = env.step(_legal(observation))  # the passive checker's first step
        assert env.observation_space.contains(observation), bad


@pytest.mark.parametrize("env_id", env_ids())
def test_a_bad_reset_mid_episode_changes_nothing(env_id):
    env = gym.make(env_id, access="T")
    observation, info = env.reset(seed=4)
    for bad in bad_resets(env_id):
        with pytest.raises((ValueError, KeyError, IndexError)):
            env.reset(**bad)
    twin = gym.make(env_id, access="T")
    twin_observation, twin_info = twin.reset(seed=4)
    assert env.step(_legal(observation))[1:4] == twin.step(_legal(twin_observation))[1:4]


def test_the_check_sits_outside_gymnasiums_checker():
    """Without it (the checker outermost, as a plain registration builds it) the same bad reset
    poisons every later step: the failure the check exists for."""
    env_id = "hear_gym/Onset-v0"
    env = gym.make(env_id, access="T")
    assert isinstance(env.env, ResetArgumentCheck) and isinstance(env.env.env, gym.wrappers.PassiveEnvChecker)
    unguarded = gym.wrappers.PassiveEnvChecker(family(env_id).make(access="T"))
    with pytest.raises(KeyError):
        unguarded.reset(options=family(env_id).reset_options("no-such-episode"))
    observation, _ = unguarded.reset(seed=3)
    with pytest.raises(TypeError, match="cannot unpack"):
        unguarded.step(_legal(observation))


@pytest.mark.parametrize("seed", [None, 0, 7, 2**40])
def test_good_seeds_pass(seed):
    check_seed(seed)
