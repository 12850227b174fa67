"""Every registered id, access condition and action format runs under Gymnasium's vector envs
(info values keep one type per key, so batching them never fails). ``SyncVectorEnv`` runs every
configuration; ``AsyncVectorEnv`` (worker processes, pickled envs) one per env id, since what it
adds over Sync (pickling, shared memory) does not depend on the configuration."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from stand_ins import PLUGINS

import hear_gym
from hear_gym.core.registry import env_ids, family
from hear_gym.envs.voicegate.actions import format_tool_call
from hear_gym.envs.voicegate.items.model import Family
from hear_gym.envs.voicegate.items.pools import TOOL_NAMES

STEPS = 100


P6A = (
    "[ACTION: RECOMMEND] [OPTION: {n}] this one",
    "[ACTION: ASK] Anything else?",
    "[ACTION: CONFIRM] Done.",
    "[ACTION: CLARIFY] Does it work?",
    "not an action",
)
VARIANTS = [
    (env_id, access, actions)
    for env_id in env_ids()
    for access in family(env_id).access_conditions
    for actions in family(env_id).action_formats
]


def _gate_reply(rng: np.random.Generator) -> str:
    tool = str(rng.choice(TOOL_NAMES))
    return str(
        rng.choice(
            [
                "[Mute]",
                format_tool_call(tool, {"x": int(rng.integers(9))}),
                format_tool_call(tool, {"x": "nine", "y": [1, {"z": None}]}),
                "The pharmacy closes at nine.",
                "<|TOOL|>{broken</|TOOL|>",
            ]
        )
    )


def _actions(obs, env_id: str, actions: str, rng: np.random.Generator, n: int):
    if actions == "discrete":
        return np.array([rng.choice(np.flatnonzero(mask)) for mask in obs["action_mask"]])
    if env_id == "hear_gym/VoiceGate-v0":
        return tuple(_gate_reply(rng) for _ in range(n))
    return tuple(rng.choice(P6A).format(n=rng.integers(1, 12)) for _ in range(n))


ASYNC_CASES = [
    next((env_id, access, actions) for env_id_, access, actions in VARIANTS if env_id_ == env_id)
    for env_id in env_ids()
]
CASES = [(SyncVectorEnv, *variant) for variant in VARIANTS] + [
    (AsyncVectorEnv, *case) for case in ASYNC_CASES
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "vector_class,env_id,access,actions", CASES, ids=lambda v: v.__name__ if isinstance(v, type) else str(v)
)
def test_vector_envs_run(vector_class, env_id, access, actions):
    kwargs = dict(access=access, actions=actions, **PLUGINS.get(access, {}))
    env = vector_class([lambda: gym.make(env_id, **kwargs)] * 2)
    rng = np.random.default_rng(0)
    try:
        obs, _ = env.reset(seed=0)
        ended = 0
        for _ in range(STEPS):
            obs, _, terminated, truncated, info = env.step(_actions(obs, env_id, actions, rng, 2))
            ended += int(np.sum(terminated | truncated))
        assert ended > 0  # autoreset was exercised
    finally:
        env.close()


def test_make_vec_with_the_features_observation():
    env = gym.make_vec("hear_gym/Hear2Act-v0", num_envs=2, vectorization_mode="sync", observation="features")
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(50):
        obs, *_ = env.step(_actions(obs, "hear_gym/Hear2Act-v0", "discrete", rng, 2))
    assert obs["dialogue"].shape[0] == 2
    env.close()


def test_every_registered_id_is_covered():
    assert {v[0] for v in VARIANTS} == set(env_ids()) == set(hear_gym.ENV_IDS)


def _leaf_types(info: dict, prefix: str, seen: dict) -> None:
    """How a vector env batches each info key: recursively (dict), into a typed array (numbers
    and bools, by their type) or into an object array (anything else, None included)."""
    for key, value in info.items():
        name = f"{prefix}.{key}"
        if isinstance(value, dict):
            seen.setdefault(name, set()).add("dict")
            _leaf_types(value, name, seen)
        elif type(value) in (int, float, bool) or isinstance(value, np.number):
            seen.setdefault(name, set()).add(type(value).__name__)
        else:
            seen.setdefault(name, set()).add("object")


def _unstable(seen: dict) -> dict:
    """Keys batched two ways: a dict next to anything else, or a typed array next to another type."""
    return {k: v for k, v in seen.items() if len(v) > 1}


def test_voicegate_info_keeps_one_type_per_key_over_every_family():
    seen: dict = {}
    rng = np.random.default_rng(0)
    for item_family in Family:
        env = gym.make(
            "hear_gym/VoiceGate-v0", access="T", actions="text", family=item_family.value, split=None
        )
        for index in range(0, len(env.unwrapped.items), 7):
            _, info = env.reset(options={"index": index})
            _leaf_types(info, "", seen)
            _, _, _, _, info = env.step(_gate_reply(rng))
            _leaf_types(info, "", seen)
    env = gym.make("hear_gym/VoiceGate-v0", access="A+T", family="speaker_switch", split="test")
    for index in range(12):  # text-only and audio conditions interleave
        _, info = env.reset(options={"index": index})
        _leaf_types(info, "", seen)
    assert not _unstable(seen)


def test_hear2act_info_keeps_one_type_per_key():
    seen: dict = {}
    rng = np.random.default_rng(0)
    env = gym.make("hear_gym/Hear2Act-v0", actions="text", split="all")
    for seed in range(40):
        _, info = env.reset(seed=seed)
        _leaf_types(info, "", seen)
        for _ in range(8):
            _, _, terminated, truncated, info = env.step(rng.choice(P6A).format(n=rng.integers(1, 12)))
            _leaf_types(info, "", seen)
            if terminated or truncated:
                break
    assert not _unstable(seen)
