"""Scenario-level bootstrap statistics (paper section 4.3, Appendix D).

The scenario is the statistical unit: every quantity is first summed per scenario (repeated
rollouts of a scenario stay together), then scenarios are resampled with replacement. Paired
contrasts and pooled (equal-weight across models) statistics reuse the *same* resampled scenario
indices for every condition, which is what makes them paired.

A run's summary asks for hundreds of intervals over the same scenarios with the same seed, so the
resampled indices are drawn once per (seed, scenarios, resamples) and each condition's statistic
over them is computed once and kept with its sums: every interval is the one a fresh draw gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

N_RESAMPLES = 2_000
CONFIDENCE = 0.95


def flat_estimates(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """A cell's metrics as ``{name: estimate dict}``. Families may group them one level or more
    (Onset: by rendering slice); groups join the name with "/" (``"clean/post_onset_accuracy"``)."""
    flat: dict[str, dict[str, Any]] = {}
    for name, value in metrics.items():
        if isinstance(value, Mapping) and "point" in value:
            flat[prefix + name] = dict(value)
        elif isinstance(value, Mapping):
            flat.update(flat_estimates(value, f"{prefix}{name}/"))
    return flat


@dataclass(frozen=True)
class Estimate:
    point: float
    low: float
    high: float
    n_scenarios: int

    def as_dict(self) -> dict[str, float | int]:
        return {"point": self.point, "low": self.low, "high": self.high, "n_scenarios": self.n_scenarios}

    def percent(self, signed: bool = False) -> str:
        sign = "+" if signed else ""
        return f"{100 * self.point:{sign}.1f} [{100 * self.low:{sign}.1f}, {100 * self.high:{sign}.1f}]"


@dataclass(frozen=True)
class RatioSums:
    """Per-scenario numerator and denominator sums of one metric in one condition."""

    numerator: np.ndarray
    denominator: np.ndarray
    # statistics over the shared index arrays of ``_resamples`` (by their identity; see the module
    # docstring): (indices, their statistic), read-only
    _kept: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.numerator.shape != self.denominator.shape or self.numerator.ndim != 1:
            raise ValueError("numerator and denominator must be 1-D arrays of equal length")

    def statistic(self, indices: np.ndarray) -> np.ndarray:
        """Ratio of sums over the scenarios in each row of ``indices`` (nan when 0/0)."""
        if indices.flags.writeable:  # not one of the shared resamples: computed afresh
            return self._ratio(indices)
        kept = self._kept.get(id(indices))
        if kept is None or kept[0] is not indices:
            value = self._ratio(indices)
            value.flags.writeable = False
            kept = self._kept[id(indices)] = (indices, value)
        return kept[1]

    def _ratio(self, indices: np.ndarray) -> np.ndarray:
        num = self.numerator[indices].sum(axis=-1)
        den = self.denominator[indices].sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


Statistic = Callable[[np.ndarray], np.ndarray]


def bootstrap(
    statistic: Statistic,
    n_scenarios: int,
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap of ``statistic``, a function of scenario index arrays."""
    if n_scenarios < 1:
        raise ValueError("need at least one scenario")
    everyone, indices = _resamples(seed, n_scenarios, n_resamples)
    point = float(statistic(everyone)[0])
    draws = statistic(indices)
    alpha = (1 - confidence) / 2
    if np.all(np.isnan(draws)):
        return Estimate(point, float("nan"), float("nan"), n_scenarios)
    low, high = np.nanquantile(draws, [alpha, 1 - alpha])
    return Estimate(point, float(low), float(high), n_scenarios)


@lru_cache(maxsize=16)
def _resamples(seed: int, n_scenarios: int, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """(every scenario once, as one row; ``n_resamples`` rows of resampled scenario indices),
    read-only and shared by every interval with these arguments."""
    rng = np.random.default_rng(seed)
    everyone = np.arange(n_scenarios)[None, :]
    indices = rng.integers(0, n_scenarios, size=(n_resamples, n_scenarios))
    everyone.flags.writeable = indices.flags.writeable = False
    return everyone, indices


def ratio_ci(sums: RatioSums, **kwargs) -> Estimate:
    return bootstrap(sums.statistic, len(sums.numerator), **kwargs)


def contrast_ci(terms: Sequence[tuple[float, RatioSums]], **kwargs) -> Estimate:
    """A linear contrast of conditions on the same scenarios, e.g. ``[(1, B), (-1, A)]`` for
    the paired difference B - A, or four terms for a difference of differences."""
    if not terms:
        raise ValueError("a contrast needs at least one term")
    _same_length(*(sums for _, sums in terms))
    return bootstrap(
        lambda idx: sum(w * sums.statistic(idx) for w, sums in terms), len(terms[0][1].numerator), **kwargs
    )


def pooled_ci(per_model: list[RatioSums], **kwargs) -> Estimate:
    """Each model's statistic on the same resample, averaged with equal weight."""
    if not per_model:
        raise ValueError("need at least one model")
    _same_length(*per_model)
    return bootstrap(
        lambda idx: np.mean([m.statistic(idx) for m in per_model], axis=0),
        len(per_model[0].numerator),
        **kwargs,
    )


def _same_length(*sums: RatioSums) -> None:
    if len({len(s.numerator) for s in sums}) != 1:
        raise ValueError("paired statistics need the same scenarios in every condition")
