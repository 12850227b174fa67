"""Discrete actions as Gymnasium and Stable-Baselines3 hand them to an env."""

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.core.spaces import discrete_index


@pytest.mark.parametrize(
    "action", [12, np.int64(12), np.int32(12), np.array(12), np.array(12, dtype=np.uint8)]
)
def test_integer_forms_are_accepted(action):
    assert discrete_index(action, 22) == 12 and type(discrete_index(action, 22)) is int


@pytest.mark.parametrize(
    "action", [12.0, np.float64(12), True, np.bool_(True), "12", np.array([12]), None, 22, -1]
)
def test_other_forms_are_refused(action):
    with pytest.raises(ValueError, match="Discrete\\(22\\)"):
        discrete_index(action, 22)


@pytest.mark.parametrize("env_id", ["hear_gym/Hear2Act-v0", "hear_gym/VoiceGate-v0"])
def test_envs_step_with_what_sb3_predict_returns(env_id):
    kwargs = {"access": "T"} if env_id.endswith("VoiceGate-v0") else {}
    env = gym.make(env_id, **kwargs)
    obs, _ = env.reset(seed=0)
    action = np.array(int(np.flatnonzero(obs["action_mask"])[-1]))  # 0-d, as model.predict gives
    assert env.action_space.contains(action)
    env.step(action)
