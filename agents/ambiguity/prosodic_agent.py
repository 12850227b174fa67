"""The prosodic-feature classifier (``prosodic_classifier``) as a registered agent: fitted when the
agent is built, on the train split's audio-decided pairs rendered in the env's default voice and
renderer (both readings of each pair); it hears the clip (``A`` or ``A+T``), answers a minimal
pair, and option A on every other question."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.ambiguity.prosodic_classifier import (
    ProsodicClassifier,
    ProsodicClassifierAgent,
    examples,
    suite_pairs,
)
from hear_gym.envs.ambiguity.env import DEFAULT_VOICE


@lru_cache(maxsize=2)
def trained_prosodic_classifier(voice: str = DEFAULT_VOICE, renderer: str = "espeak") -> ProsodicClassifier:
    train = examples(suite_pairs("train"), (voice,), renderer)
    return ProsodicClassifier().fit(
        np.stack([e.features for e in train]), np.array([1 - e.said for e in train])
    )


class ProsodicAgent(ProsodicClassifierAgent):
    def __init__(self) -> None:
        super().__init__(trained_prosodic_classifier())
