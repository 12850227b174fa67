"""Stable-Baselines3 takes the feature observation of every access condition as it is:
SB3's own env checker (warnings are failures) and a short (Maskable)PPO run."""

import warnings

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stand_ins import PLUGINS  # noqa: E402

from hear_gym.core.registry import env_ids, family  # noqa: E402
from training.ppo.train import silent_logger  # noqa: E402


def make(env_id: str, access: str) -> gym.Env:
    return gym.make(env_id, access=access, observation="features", **PLUGINS.get(access, {}))


VARIANTS = [(env_id, access) for env_id in env_ids() for access in family(env_id).access_conditions]


@pytest.mark.parametrize("env_id,access", VARIANTS)
def test_sb3_env_checker_passes_without_warnings(env_id, access):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make(env_id, access))


@pytest.mark.parametrize("env_id,access", [("hear_gym/Hear2Act-v0", "T"), ("hear_gym/VoiceGate-v0", "A+T")])
def test_ppo_smoke_run_and_predict_step(env_id, access):
    env = make(env_id, access)
    model = PPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.set_logger(silent_logger())
    model.learn(128)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert isinstance(action, np.ndarray) and action.shape == ()
    env.step(action)


def test_maskable_ppo_reads_the_action_mask():
    env = make("hear_gym/Hear2Act-v0", "T+S")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.set_logger(silent_logger())
    model.learn(128)
    obs, _ = env.reset(seed=0)
    for _ in range(10):
        masks = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=masks)
        assert masks[int(action)]
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
