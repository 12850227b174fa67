"""Every registered id (under every access condition and action format) passes check_env and
gives identical episodes for the same seed, in one process and across processes."""

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hear_gym
from hear_gym.wrappers.access import ACCESS_CONDITIONS

VARIANTS = [(env_id, access, actions) for env_id in hear_gym.ENV_IDS
            for access in ACCESS_CONDITIONS for actions in ("discrete", "text")]


def _make(env_id, access, actions, **kwargs):
    return gym.make(env_id, access=access, actions=actions, **kwargs)


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
@pytest.mark.parametrize("env_id,access,actions", VARIANTS)
def test_check_env(env_id, access, actions):
    env = _make(env_id, access, actions)
    check_env(env.unwrapped if access == "T" and actions == "discrete" else env, skip_render_check=False)
    check_env(env)


def rollout(env_id, access, actions, seed, steps=30):
    env = _make(env_id, access, actions, split="test")
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    trace = [json.dumps({k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in obs.items()},
                        sort_keys=True)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        trace.append(json.dumps([obs["transcript"], reward, terminated, truncated,
                                 info["delivery_label"]]))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append(obs["transcript"])
    return trace


@pytest.mark.parametrize("env_id,access,actions", VARIANTS)
def test_same_seed_same_episodes(env_id, access, actions):
    assert rollout(env_id, access, actions, 7) == rollout(env_id, access, actions, 7)
    assert rollout(env_id, access, actions, 7) != rollout(env_id, access, actions, 8)


def test_same_seed_same_episodes_across_processes():
    code = ("import json, hear_gym; from tests.test_env_registration import rollout; "
            "print(json.dumps(rollout('hear_gym/Hear2Act-v0', 'T+S', 'discrete', 11)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == rollout("hear_gym/Hear2Act-v0", "T+S", "discrete", 11)
