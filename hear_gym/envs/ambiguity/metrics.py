"""Ambiguity metrics over episode records, with instance-level bootstrap intervals (the paper's
Table 2 rows, per language, with 95% CIs).

A record is one finished episode (the env's ``info["episode"]``). Rows (``ROWS``): the paper's
phenomena, omission and coreference split into their two tasks as in its Table 3, each
phonological and semantic contrast, and ``overall``. Accuracy is correct episodes over episodes,
summed per instance (a minimal pair's two readings, an omission item's three tasks stay together),
and the bootstrap resamples instances (``N_RESAMPLES`` draws, seed 0).

Detection rows count the detection episode and its control (gold "no"), so answering "yes" to
everything scores 50%, not 100% as it would on the paper's positives alone.

Minimal pairs (``pair_statistics``, audio-decided contrasts): both readings of a pair resampled together, the accuracy on
reading a and on reading b, their paired difference (a listener biased to one interpretation
shows it) and the share of pairs with both readings right (0 for anything that cannot hear).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, ratio_ci

Record = dict[str, Any]
N_RESAMPLES = 2_000
LANGUAGE_SLICES = ("en", "zh", "all")
TASK_ROWS = (
    "phonological",
    "semantic",
    "omission",
    "omission/detection",
    "omission/completion",
    "coreference",
    "coreference/detection",
    "coreference/resolution",
    "multi_turn",
)
CONTRAST_ROWS = ("pause", "stress", "intonation", "tone", "heteronym", "heterograph", "lexical", "syntactic")
ROWS = (*TASK_ROWS, *CONTRAST_ROWS, "overall")
AUDIO_DECIDED_ROWS = frozenset(c.value for c in AUDIO_DECIDED)


def in_row(record: Record, row: str) -> bool:
    if row == "overall":
        return True
    if row in CONTRAST_ROWS:
        return record["contrast"] == row
    return row in (record["phenomenon"], record["row"])


def in_language(record: Record, language: str) -> bool:
    return language == "all" or record["language"] == language


def instance_sums(records: Sequence[Record], hit: Callable[[Record], float]) -> RatioSums:
    """Per-instance sums of ``hit`` (numerator) and of episodes (denominator)."""
    instances = sorted({r["instance_id"] for r in records})
    index = {i: k for k, i in enumerate(instances)}
    numerator, denominator = np.zeros(len(instances)), np.zeros(len(instances))
    for record in records:
        numerator[index[record["instance_id"]]] += hit(record)
        denominator[index[record["instance_id"]]] += 1
    return RatioSums(numerator, denominator)


def accuracy(records: Sequence[Record], n_resamples: int = N_RESAMPLES, seed: int = 0) -> Estimate:
    return ratio_ci(instance_sums(records, lambda r: float(r["success"])), n_resamples=n_resamples, seed=seed)


def accuracy_table(
    records: Sequence[Record], n_resamples: int = N_RESAMPLES
) -> dict[str, dict[str, Estimate]]:
    """language -> row -> accuracy with its instance-bootstrap 95% interval (empty cells left out)."""
    table: dict[str, dict[str, Estimate]] = {}
    for language in LANGUAGE_SLICES:
        rows = {}
        for row in ROWS:
            chosen = [r for r in records if in_language(r, language) and in_row(r, row)]
            if chosen:
                rows[row] = accuracy(chosen, n_resamples)
        if rows:
            table[language] = rows
    return table


def pair_statistics(records: Sequence[Record], n_resamples: int = N_RESAMPLES) -> dict[str, Estimate]:
    """Over the audio-decided minimal pairs (heterograph pairs sound the same and are left out):
    ``reading_a``, ``reading_b``, ``a_minus_b`` and ``both_right``, resampling pairs (records of
    the same pair share their ``instance_id``)."""
    phon = [r for r in records if r["phenomenon"] == "phonological" and r["contrast"] in AUDIO_DECIDED_ROWS]
    if not phon:
        return {}
    side = {
        "a": [r for r in phon if r["item_id"].endswith("/a")],
        "b": [r for r in phon if r["item_id"].endswith("/b")],
    }
    pairs = sorted({r["instance_id"] for r in phon})
    index = {p: k for k, p in enumerate(pairs)}
    right = {s: np.zeros(len(pairs)) for s in side}
    seen = {s: np.zeros(len(pairs)) for s in side}
    for s, chosen in side.items():
        for r in chosen:
            right[s][index[r["instance_id"]]] += float(r["success"])
            seen[s][index[r["instance_id"]]] += 1
    sums = {s: RatioSums(right[s], seen[s]) for s in side}
    both = RatioSums((right["a"] * right["b"] > 0).astype(float), np.minimum(seen["a"], seen["b"]))
    kwargs = {"n_resamples": n_resamples, "seed": 0}
    return {
        "reading_a": ratio_ci(sums["a"], **kwargs),
        "reading_b": ratio_ci(sums["b"], **kwargs),
        "a_minus_b": contrast_ci([(1.0, sums["a"]), (-1.0, sums["b"])], **kwargs),
        "both_right": ratio_ci(both, **kwargs),
    }


def episode_scalars(record: Record) -> dict[str, float]:
    """What a trainer logs per finished episode (``EnvFamily.episode_scalars``)."""
    return {
        "return": float(record["return"]),
        "success%": 100.0 * float(record["success"]),
        "invalid%": 100.0 * float(np.mean([k == "invalid" for k in record["kinds"]])),
    }
