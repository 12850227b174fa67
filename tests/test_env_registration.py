"""Every registered id (under every access condition and action format) passes check_env and
gives identical episodes for the same seed, in one process and across processes."""

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stand_ins import PLUGINS

import hear_gym
from hear_gym.envs.hear2act.access import ACCESS_CONDITIONS
from hear_gym.envs.voicegate.access import GATE_ACCESS

ACCESS = {"hear_gym/Hear2Act-v0": ACCESS_CONDITIONS, "hear_gym/VoiceGate-v0": GATE_ACCESS}
TRACED_INFO = {"hear_gym/Hear2Act-v0": "delivery_label", "hear_gym/VoiceGate-v0": "outcome"}
VARIANTS = [
    (env_id, access, actions)
    for env_id in hear_gym.ENV_IDS
    for access in ACCESS[env_id]
    for actions in ("discrete", "text")
]
VARIANTS += [("hear_gym/Hear2Act-v0", "T+S|shuffled", "discrete")]
VARIANTS += [
    (env_id, f"{access}|features", "discrete") for env_id in hear_gym.ENV_IDS for access in ACCESS[env_id]
]


def _make(env_id, access, actions, **kwargs):
    access, _, extra = access.partition("|")
    if extra == "features":
        kwargs["observation"] = "features"
    elif extra:
        kwargs["state_intervention"] = extra
    return gym.make(env_id, access=access, actions=actions, **PLUGINS.get(access, {}), **kwargs)


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
@pytest.mark.parametrize("env_id,access,actions", VARIANTS)
def test_check_env(env_id, access, actions):
    env = _make(env_id, access, actions)
    check_env(env.unwrapped, skip_render_check=False)
    check_env(env)


def _fingerprint(obs) -> str:
    """Every observation value, audio included (hashed, to keep traces small)."""
    import hashlib

    return json.dumps(
        {
            k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
            if isinstance(v, np.ndarray)
            else v
            for k, v in obs.items()
        },
        sort_keys=True,
    )


def rollout(env_id, access, actions, seed, steps=30):
    env = _make(env_id, access, actions, split="test")
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    trace = [_fingerprint(obs)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        trace.append(
            json.dumps(
                [_fingerprint(obs), reward, terminated, truncated, info[TRACED_INFO[env_id]]], sort_keys=True
            )
        )
        if terminated or truncated:
            obs, info = env.reset()
            trace.append(_fingerprint(obs))
    return trace


@pytest.mark.parametrize("env_id,access,actions", VARIANTS)
def test_same_seed_same_episodes(env_id, access, actions):
    assert rollout(env_id, access, actions, 7) == rollout(env_id, access, actions, 7)
    assert rollout(env_id, access, actions, 7) != rollout(env_id, access, actions, 8)


@pytest.mark.parametrize("env_id,access", [("hear_gym/Hear2Act-v0", "T+S"), ("hear_gym/VoiceGate-v0", "A+T")])
def test_same_seed_same_episodes_across_processes(env_id, access):
    code = (
        "import json, sys, hear_gym; sys.path.insert(0, 'tests'); "
        "from tests.test_env_registration import rollout; "
        f"print(json.dumps(rollout({env_id!r}, {access!r}, 'discrete', 11)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == rollout(env_id, access, "discrete", 11)
