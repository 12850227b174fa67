"""Simulated ears of controlled quality: what a listener of a given quality would hear.

A simulated ear replaces the ground-truth concern state (the T+S tag) by a noisy reading of
whether the user's turn is a genuine acceptance, so the value of hearing can be measured as a
function of how well one hears. Each ear draws its errors independently per turn from a
generator the agent seeds from the episode's seed (``ear_generator``), never from a global one,
so an episode replays exactly and its errors are independent of the env's own draws.

* ``VerdictEar(recall, false_resolved)``: a thresholded probe. It says "resolved" for a genuine
  acceptance with probability ``recall`` (its true-positive rate) and for any other turn with
  probability ``false_resolved`` (its false-positive rate): a real probe's operating point.
* ``ScoreEar(auc)``: a calibrated probe. It returns a score ``s ~ N(+d/2, 1)`` on a genuine
  acceptance and ``N(-d/2, 1)`` otherwise, with ``d = sqrt(2) * Phi^-1(auc)`` so that the ROC
  area is ``auc``; its calibrated likelihoods are the two normal densities at ``s``.

Both ears read only resolved or not, never the grade of an unresolved turn (a rejection sounds
to them as a reluctant acceptance does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from hear_gym.envs.hear2act.user.states import RESOLVED_DELIVERY_LABELS

_EAR_STREAM = 0x5EA2  # keeps the ear's draws apart from anything else seeded by the episode


def ear_generator(seed: int | None) -> np.random.Generator:
    """The ear's generator for an episode seeded ``seed`` (None: unseeded, as Gymnasium's reset)."""
    return np.random.default_rng(None if seed is None else [_EAR_STREAM, int(seed)])


def resolved_tag(tag: str) -> bool:
    """Whether a T+S delivery label is a genuine acceptance."""
    return tag in RESOLVED_DELIVERY_LABELS


def _probability(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class VerdictEar:
    """A thresholded probe at a fixed operating point (module docstring)."""

    recall: float
    false_resolved: float

    def __post_init__(self) -> None:
        _probability("recall", self.recall)
        _probability("false_resolved", self.false_resolved)

    def hear(self, resolved: bool, rng: np.random.Generator) -> bool:
        """The verdict on one turn: True = "resolved"."""
        return bool(rng.random() < (self.recall if resolved else self.false_resolved))

    def likelihoods(self, verdict: bool) -> tuple[float, float]:
        """(P(verdict | resolved), P(verdict | unresolved))."""
        return (self.recall, self.false_resolved) if verdict else (1 - self.recall, 1 - self.false_resolved)


@dataclass(frozen=True)
class ScoreEar:
    """A calibrated probe of ROC area ``auc`` (module docstring)."""

    auc: float

    def __post_init__(self) -> None:
        if not isinstance(self.auc, (int, float)) or isinstance(self.auc, bool) or not 0.5 <= self.auc < 1.0:
            raise ValueError(f"auc must be in [0.5, 1) (1 is the exact channel, T+S), got {self.auc!r}")

    @property
    def separation(self) -> float:
        """d': the distance between the two score means in units of their spread."""
        return float(np.sqrt(2.0) * norm.ppf(self.auc))

    def hear(self, resolved: bool, rng: np.random.Generator) -> float:
        half = self.separation / 2
        return float(rng.normal(half if resolved else -half, 1.0))

    def likelihoods(self, score: float) -> tuple[float, float]:
        """(p(score | resolved), p(score | unresolved)), the two normal densities."""
        half = self.separation / 2
        return float(norm.pdf(score - half)), float(norm.pdf(score + half))
