"""The prosodic-feature classifier: its features cannot prefer a candidate for its position, it
answers any question with a valid option, and (slow tier) learns from a few train pairs to answer
held-out pairs in the env from the clip (A+T). Its full held-out accuracy per contrast class:
``python -m benchmarks.ambiguity.cues --part classifier``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agents.ambiguity.prosodic_classifier import (
    ProsodicClassifier,
    ProsodicClassifierAgent,
    examples,
    pair_features,
    suite_pairs,
)
from hear_gym.envs.ambiguity.family import ENV_ID
from hear_gym.envs.ambiguity.render import render_reading


@pytest.fixture(scope="module")
def small_classifier() -> ProsodicClassifier:
    """Fit on a few train pairs of two classes (one voice): enough for the weights' signs."""
    train = [p for p in suite_pairs("train") if p.contrast.value == "intonation"][:2]
    train += [p for p in suite_pairs("train") if p.contrast.value == "pause" and p.language == "zh"][:2]
    rows = examples(train, ("m3",), "espeak")
    return ProsodicClassifier().fit(
        np.stack([r.features for r in rows]), np.array([1 - r.said for r in rows])
    )


def test_features_flip_with_the_candidates():
    pair = next(p for p in suite_pairs("test") if p.contrast.value == "stress")
    a, b = (u.spoken for u in pair.readings)
    waveform = render_reading(a, "m3")
    np.testing.assert_allclose(pair_features(waveform, (a, b)), -pair_features(waveform, (b, a)))


@pytest.mark.slow
def test_the_agent_answers_held_out_pairs_from_the_clip(small_classifier):
    agent = ProsodicClassifierAgent(small_classifier)
    held_out = [p for p in suite_pairs("test") if p.contrast.value == "intonation"][:1]
    held_out += [p for p in suite_pairs("test") if p.contrast.value == "pause" and p.language == "zh"][:1]
    for pair in held_out:
        for side in "ab":
            env = gym.make(ENV_ID, access="A+T", item_ids=[f"{pair.item_id}/{side}"])
            obs, _ = env.reset(seed=0)
            _, reward, terminated, _, info = env.step(agent.act(obs))
            assert terminated and reward == 1.0, (pair.item_id, side, info["answer"])


def test_other_questions_get_a_valid_option():
    agent = ProsodicClassifierAgent(ProsodicClassifier())  # not consulted outside minimal pairs
    env = gym.make(ENV_ID, access="A+T", split="test", phenomena=["coreference"])
    obs, _ = env.reset(seed=3)
    assert env.action_space.contains(agent.act(obs))
