"""What a trainer's held-out evaluations say about learning, read from their episode records
(``evals/<name>/results.jsonl`` of a run folder, written by ``training.llm.common``).

* ``evaluation_records``: the episode records of one evaluation of a run;
* ``mean_value``: the mean per-episode reward, with a bootstrap CI over item groups (a VoiceGate
  speaker-switch command and its twins stay together).
* ``paired_lift``: the mean per-episode reward of one evaluation minus another's on the same
  episodes, the same resampled groups for both (as every paired contrast in hear_gym).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, ratio_ci
from training.llm.run_folder import read_curve

RESULTS_FILE = "results.jsonl"


def evaluation_path(run: Path, name: str) -> Path:
    """Where the evaluation ``name`` (``base``, ``final``, ``step_N``) of a run keeps its records."""
    return Path(run) / "evals" / name / RESULTS_FILE


def evaluation_records(run: Path, name: str) -> list[dict[str, Any]]:
    """The episode records of the evaluation ``name`` (``base``, ``final``, ``step_N``) of a run."""
    path = evaluation_path(run, name)
    records = read_results(path)
    if not records:
        raise ValueError(f"{path}: no episode records (was the evaluation {name!r} run?)")
    return records


def mean_value(records: list[dict[str, Any]], value: str = "reward", seed: int = 0) -> Estimate:
    """Mean per-episode ``value``, bootstrap CI over item groups."""
    return ratio_ci(_group_sums(records, _groups(records), value), seed=seed)


def paired_lift(
    before: list[dict[str, Any]], after: list[dict[str, Any]], value: str = "reward", seed: int = 0
) -> Estimate:
    """Mean ``value`` after minus before on the same episodes, bootstrap CI over item groups."""
    if sorted(r["item_id"] for r in before) != sorted(r["item_id"] for r in after):
        raise ValueError("a paired lift needs both evaluations to play the same episodes")
    groups = _groups(before)
    terms = [(1.0, _group_sums(after, groups, value)), (-1.0, _group_sums(before, groups, value))]
    return contrast_ci(terms, seed=seed)


def _group(record: dict[str, Any]) -> str:
    return record.get("group") or record["item_id"]


def _groups(records: list[dict[str, Any]]) -> dict[str, int]:
    return {g: i for i, g in enumerate(sorted({_group(r) for r in records}))}


def _group_sums(records: list[dict[str, Any]], groups: dict[str, int], value: str) -> RatioSums:
    numerator, denominator = np.zeros(len(groups)), np.zeros(len(groups))
    for record in records:
        numerator[groups[_group(record)]] += float(record[value])
        denominator[groups[_group(record)]] += 1
    return RatioSums(numerator, denominator)


def train_curve(run: Path, key: str) -> list[float]:
    """``key`` of every training row of the run's curve that logged it (``loss``, ``reward``)."""
    return [float(r[key]) for r in read_curve(Path(run)) if r.get("kind") == "train" and key in r]
