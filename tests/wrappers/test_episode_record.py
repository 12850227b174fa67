"""MoveEpisodeRecord keeps the env's episode record when a wrapper above claims info["episode"]."""

import gymnasium as gym
from gymnasium.wrappers import RecordEpisodeStatistics

from hear_gym.envs.hear2act.actions import CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.wrappers.episode_record import EPISODE_RECORD_KEY, MoveEpisodeRecord


def test_the_record_survives_under_episode_statistics():
    scenario = scenario_bank()[0]
    env = gym.make("hear_gym/Hear2Act-v0", item_ids=[scenario.scenario_id])
    env = RecordEpisodeStatistics(MoveEpisodeRecord(env))
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(RECOMMEND0 + scenario.gold_option - 1)
    assert not terminated and EPISODE_RECORD_KEY not in info and "episode" not in info
    _, reward, terminated, _, info = env.step(CONFIRM)
    assert terminated and reward == 1.0
    assert info[EPISODE_RECORD_KEY]["success"] and info[EPISODE_RECORD_KEY]["return"] == 1.0
    assert info["episode"]["r"] == 1.0 and info["episode"]["l"] == 2  # Gymnasium's own summary
