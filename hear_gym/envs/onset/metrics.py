"""Onset metrics over trajectory records (PACT-SLM "Metric definitions"), with contrast-group
bootstrap intervals.

A record is one trajectory under one rendering (the env's ``info["episode"]``: ``targets`` and
``predictions`` over the five prefixes, ``onset_index``, ``action``, ``group_id``, ``rendering``).

* ``trajectory_exactness``: share of trajectory/rendering records whose five predictions all match;
* ``pre_onset_exposed``: Ask-Clarify, Call-Tool or Interrupt-Safe predictions over the prefixes
  strictly before the onset (Think and Abstain are internal and not counted; lower is better);
* ``post_onset_accuracy``: correct source-utterance labels over all prefixes at or after the
  onset (pooled), split into ``post_onset_exposed_labels`` and ``post_onset_internal_labels`` by
  the kind of the target label;
* ``onset_exactness``: share of records whose first non-Wait prediction is at the onset;
* ``onset_error``: mean (predicted - assigned) onset fraction, where a trajectory that never acts
  has predicted onset 1.2 (a mean, not a percentage).

Every metric is a ratio of per-group sums; the bootstrap resamples contrast groups (all records of
a group, both branches and both renderings, stay together), ``N_RESAMPLES`` draws with seed 0, and
paired model differences reuse the same draws (same seed, same group order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hear_gym.envs.onset.actions import EXPOSED, WAIT
from hear_gym.envs.onset.groups.model import PREFIX_FRACTIONS
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, ratio_ci

Record = dict[str, Any]
N_RESAMPLES = 1_000
NEVER_ACTS = 1.2  # the predicted onset of a trajectory without a non-Wait prediction
SLICES = ("all", "clean", "noise15")


def predicted_onset(record: Record) -> float:
    for k, prediction in enumerate(record["predictions"]):
        if prediction != WAIT:
            return PREFIX_FRACTIONS[k]
    return NEVER_ACTS


def _post(record: Record, kinds: str) -> tuple[int, int]:
    if kinds == "exposed" and record["action"] not in EXPOSED:
        return 0, 0
    if kinds == "internal" and record["action"] in EXPOSED:
        return 0, 0
    k0 = record["onset_index"]
    pairs = list(zip(record["predictions"][k0:], record["targets"][k0:], strict=True))
    return sum(p == t for p, t in pairs), len(pairs)


def _pre_exposed(record: Record) -> tuple[int, int]:
    before = record["predictions"][: record["onset_index"]]
    return sum(p in EXPOSED for p in before), len(before)


# metric -> record -> (numerator, denominator)
COUNTS: dict[str, Callable[[Record], tuple[float, float]]] = {
    "trajectory_exactness": lambda r: (float(r["predictions"] == r["targets"]), 1.0),
    "pre_onset_exposed": _pre_exposed,
    "post_onset_accuracy": lambda r: _post(r, "all"),
    "post_onset_exposed_labels": lambda r: _post(r, "exposed"),
    "post_onset_internal_labels": lambda r: _post(r, "internal"),
    "onset_exactness": lambda r: (float(predicted_onset(r) == PREFIX_FRACTIONS[r["onset_index"]]), 1.0),
    "onset_error": lambda r: (predicted_onset(r) - PREFIX_FRACTIONS[r["onset_index"]], 1.0),
}
PERCENT_METRICS = tuple(m for m in COUNTS if m != "onset_error")


def episode_scalars(record: Record) -> dict[str, float]:
    """What a trainer logs per finished trajectory (``EnvFamily.episode_scalars``): the return and
    each metric the trajectory counts toward (in percent; the onset error in prefix fraction)."""
    scalars = {"return": float(record["return"])}
    for metric, count in COUNTS.items():
        numerator, denominator = count(record)
        if denominator:
            scale = 100.0 if metric in PERCENT_METRICS else 1.0
            scalars[metric + ("%" if metric in PERCENT_METRICS else "")] = scale * numerator / denominator
    return scalars


def in_slice(record: Record, slice_name: str) -> bool:
    return slice_name == "all" or record["rendering"] == slice_name


def group_sums(records: Sequence[Record], metric: str, groups: Sequence[str]) -> RatioSums:
    """Per-group numerator and denominator of ``metric``, in the order of ``groups``."""
    index = {g: i for i, g in enumerate(groups)}
    numerator, denominator = np.zeros(len(groups)), np.zeros(len(groups))
    for record in records:
        num, den = COUNTS[metric](record)
        numerator[index[record["group_id"]]] += num
        denominator[index[record["group_id"]]] += den
    return RatioSums(numerator, denominator)


def counts(records: Sequence[Record], metric: str) -> tuple[float, float]:
    sums = group_sums(records, metric, sorted({r["group_id"] for r in records}))
    return float(sums.numerator.sum()), float(sums.denominator.sum())


def metric_table(
    records: Sequence[Record], n_resamples: int = N_RESAMPLES, seed: int = 0
) -> dict[str, dict[str, Estimate]]:
    """slice -> metric -> estimate with its group-bootstrap 95% interval (empty slices left out)."""
    table = {}
    for slice_name in SLICES:
        chosen = [r for r in records if in_slice(r, slice_name)]
        if not chosen:
            continue
        groups = sorted({r["group_id"] for r in chosen})
        table[slice_name] = {
            metric: ratio_ci(group_sums(chosen, metric, groups), n_resamples=n_resamples, seed=seed)
            for metric in COUNTS
        }
    return table


def paired_difference(
    records_a: Sequence[Record],
    records_b: Sequence[Record],
    metric: str,
    slice_name: str = "all",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """``metric`` of model A minus model B on the same groups, both resampled with the same draws."""
    chosen_a = [r for r in records_a if in_slice(r, slice_name)]
    chosen_b = [r for r in records_b if in_slice(r, slice_name)]
    groups = sorted({r["group_id"] for r in chosen_a})
    if groups != sorted({r["group_id"] for r in chosen_b}):
        raise ValueError("a paired difference needs both models' records on the same contrast groups")
    return contrast_ci(
        [(1.0, group_sums(chosen_a, metric, groups)), (-1.0, group_sums(chosen_b, metric, groups))],
        n_resamples=n_resamples,
        seed=seed,
    )
