"""The hidden concern state as numbers, for a critic that sees it while it trains.

``PRIVILEGED_CONCERN`` encodes the delivery label of the user's latest turn (what T+S shows the
agent in words: "satisfied", "lukewarm", ...) one-hot over every label, from the step's ``info``.
The ``per_option_privileged`` PPO policy's critic reads it in training (an asymmetric
actor-critic); its actor never does, and evaluations run without it."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.training_material import PrivilegedInfo
from hear_gym.envs.hear2act.user.states import ALL_DELIVERY_LABELS

CONCERN_SIZE = len(ALL_DELIVERY_LABELS)


def concern_one_hot(info: dict[str, Any]) -> np.ndarray:
    out = np.zeros(CONCERN_SIZE, dtype=np.float32)
    out[ALL_DELIVERY_LABELS.index(info["delivery_label"])] = 1.0
    return out


PRIVILEGED_CONCERN = PrivilegedInfo(CONCERN_SIZE, concern_one_hot)
