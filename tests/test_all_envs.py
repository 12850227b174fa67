"""Every registered env id, taken from the registry, under every access condition and action
format its family declares (and the feature observation): passes Gymnasium's ``check_env``, gives
identical episodes for the same seed in one process and across processes, and ends every episode
with its record in ``info["episode"]``."""

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stand_ins import PLUGINS

from hear_gym.core.registry import env_ids, family
from hear_gym.envs.registration import FAMILIES

VARIANTS = [
    (env_id, access, actions, observation)
    for env_id in env_ids()
    for access in family(env_id).access_conditions
    for actions, observation in [
        *((a, "dict") for a in family(env_id).action_formats),
        ("discrete", "features"),
    ]
]


def _make(env_id, access, actions, observation, **kwargs):
    return gym.make(
        env_id, access=access, actions=actions, observation=observation, **PLUGINS.get(access, {}), **kwargs
    )


def test_every_family_is_registered_and_found():
    assert env_ids() == tuple(FAMILIES) and env_ids()
    assert all(family(env_id).env_id == env_id for env_id in env_ids())
    assert all(env_id in gym.registry for env_id in env_ids())


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
@pytest.mark.parametrize("env_id,access,actions,observation", VARIANTS)
def test_check_env(env_id, access, actions, observation):
    env = _make(env_id, access, actions, observation)
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


def rollout(env_id, access, actions, observation, seed, steps=30, **env_kwargs):
    env = _make(env_id, access, actions, observation, split="test", **env_kwargs)
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    trace = [_fingerprint(obs)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        record = json.dumps(info.get("episode"), sort_keys=True, default=str)
        trace.append(json.dumps([_fingerprint(obs), reward, terminated, truncated, record], sort_keys=True))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append(_fingerprint(obs))
    return trace


@pytest.mark.parametrize("env_id,access,actions,observation", VARIANTS)
def test_same_seed_same_episodes(env_id, access, actions, observation):
    first = rollout(env_id, access, actions, observation, 7)
    assert rollout(env_id, access, actions, observation, 7) == first
    assert rollout(env_id, access, actions, observation, 8) != first


@pytest.mark.parametrize("env_id", env_ids())
def test_same_seed_same_episodes_across_processes(env_id):
    access = "A+T"  # audio included
    code = (
        "import json, sys; sys.path.insert(0, 'tests'); from test_all_envs import rollout; "
        f"print(json.dumps(rollout({env_id!r}, {access!r}, 'discrete', 'dict', 11)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == rollout(env_id, access, "discrete", "dict", 11)


@pytest.mark.parametrize("env_id", env_ids())
def test_every_episode_ends_with_its_record(env_id):
    env_family = family(env_id)
    env = gym.make(env_id, access="T", split="test")
    rng = np.random.default_rng(0)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        assert "episode" not in info
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(
                int(rng.choice(np.flatnonzero(obs["action_mask"])))
            )
            done = terminated or truncated
            assert ("episode" in info) == done
        record = json.loads(json.dumps(info["episode"]))  # JSON, as results.jsonl stores it
        # what trainers log per episode: finite numbers, the return among them
        scalars = env_family.episode_scalars(record)
        assert all(isinstance(v, float) and np.isfinite(v) for v in scalars.values())
        assert scalars["return"] == pytest.approx(record.get("return", record.get("reward")))
        item_id = record["item_id"]
        # the family's reset options play that item again, the same way for the same seed
        replays = [env.reset(seed=seed, options=env_family.reset_options(item_id)) for _ in range(2)]
        assert {i["item_id"] for _, i in replays} == {item_id}
        assert _fingerprint(replays[0][0]) == _fingerprint(replays[1][0])


@pytest.mark.parametrize("env_id", env_ids())
def test_every_end_is_a_termination(env_id):
    """Each env scores its episode where it ends, the step limit included (Hear2Act's turn limit,
    Onset's last prefix, DeliveryPlan's last step): that step is ``terminated``, never
    ``truncated``, so no trainer bootstraps a continuation past a scored end. The player takes
    the lowest valid action, which never confirms on Hear2Act, so its dialogues run to the limit."""
    env = gym.make(env_id, access="T", split="test")
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        steps, terminated = 0, False
        while not terminated:
            obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
            assert not truncated
            steps += 1
        assert "episode" in info and steps < 1000
        assert info["episode"].get("turn_limit", True)  # Hear2Act: ended by its turn limit
