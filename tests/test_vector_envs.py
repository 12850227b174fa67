"""Every registered id, access condition and action format runs under Gymnasium's vector envs
(info values keep one type per key, so batching them never fails)."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

import hear_gym
from hear_gym.wrappers.access import ACCESS_CONDITIONS

STEPS = 200


class FixedInferrer:
    def infer(self, waveform, sample_rate, transcript, reference):
        return "The user sounds unconvinced."


class FixedAffect:
    def classify(self, waveform, sample_rate):
        return "neutral"


PLUGINS = {"T+S^": {"state_inferrer": FixedInferrer()}, "T+SER": {"affect_classifier": FixedAffect()}}
P6A = ("[ACTION: RECOMMEND] [OPTION: {n}] this one", "[ACTION: ASK] Anything else?", "[ACTION: CONFIRM] Done.",
       "[ACTION: CLARIFY] Does it work?", "not an action")
VARIANTS = [("hear_gym/Hear2Act-v0", access, actions) for access in ACCESS_CONDITIONS
            for actions in ("discrete", "text")]


def _actions(obs, actions: str, rng: np.random.Generator, n: int):
    if actions == "text":
        return tuple(rng.choice(P6A).format(n=rng.integers(1, 12)) for _ in range(n))
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in obs["action_mask"]])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("vector_class", [SyncVectorEnv, AsyncVectorEnv], ids=lambda c: c.__name__)
@pytest.mark.parametrize("env_id,access,actions", VARIANTS)
def test_vector_envs_run(vector_class, env_id, access, actions):
    kwargs = dict(access=access, actions=actions, **PLUGINS.get(access, {}))
    env = vector_class([lambda: gym.make(env_id, **kwargs)] * 2)
    rng = np.random.default_rng(0)
    try:
        obs, _ = env.reset(seed=0)
        ended = 0
        for _ in range(STEPS):
            obs, _, terminated, truncated, info = env.step(_actions(obs, actions, rng, 2))
            ended += int(np.sum(terminated | truncated))
        assert ended > 0  # autoreset was exercised
    finally:
        env.close()


def test_make_vec_with_the_features_observation():
    env = gym.make_vec("hear_gym/Hear2Act-v0", num_envs=2, vectorization_mode="sync", observation="features")
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(50):
        obs, *_ = env.step(_actions(obs, "discrete", rng, 2))
    assert obs["dialogue"].shape[0] == 2
    env.close()


def test_every_registered_id_is_covered():
    assert {v[0] for v in VARIANTS} == set(hear_gym.ENV_IDS) - {"hear_gym/VoiceGate-v0"}
