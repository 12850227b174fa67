"""Hear2Act outcome and diagnostic metrics (paper section 4.3).

``episode_counts`` turns one episode's turn records into counts; every reported metric is a
ratio of two such counts, summed per scenario and then over scenarios (so per-recommendation
rates such as OptSat% pool recommendation turns, as in the paper). The standardized opening
recommendation is the same for every policy and is left out of the per-decision counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hear_gym.stats.bootstrap import RatioSums


def episode_counts(
    turns: Sequence[Mapping], final_option: int, gold_option: int, confirmed: bool
) -> dict[str, int]:
    """Counts for one finished episode. ``turns[0]`` is the request, ``turns[1]`` the opening."""
    decisions = turns[2:]
    kinds = [t["action"]["kind"] if t["action"] else "invalid" for t in decisions]
    recommendations = [t for t in decisions if t["action"] and t["action"]["kind"] == "recommend"]
    disclosed = len(turns[-1]["disclosed"]) if turns else 0
    success = int(final_option == gold_option)
    return {
        "episodes": 1,
        "success": success,
        "decisions": len(decisions),
        "recommend": kinds.count("recommend"),
        "ask": kinds.count("ask"),
        "clarify": kinds.count("clarify"),
        "confirm": kinds.count("confirm"),
        "invalid": kinds.count("invalid"),
        "optsat": sum(t["option_acceptance"] != "negative" for t in recommendations),
        "svcsat": sum(t["interaction_satisfaction"] == "appreciative" for t in recommendations),
        "concerns_disclosed": disclosed,
        "full_disclosure": int(disclosed == 3),
        "turns": len(turns) - 1,  # assistant turns, the opening included
        "premature_closure": int(confirmed and not success),
    }


@dataclass(frozen=True)
class Metric:
    name: str
    numerator: str
    denominator: str
    percent: bool
    description: str
    decimals: int = 1  # in tables


METRICS: tuple[Metric, ...] = (
    Metric("1st%", "success", "episodes", True, "episodes ending on the gold option"),
    Metric("OptSat%", "optsat", "recommend", True, "recommendations met by non-negative acceptance"),
    Metric("SvcSat%", "svcsat", "recommend", True, "recommendations met by appreciative satisfaction"),
    Metric("recommend share", "recommend", "decisions", True, "share of decision turns"),
    Metric("ask share", "ask", "decisions", True, "share of decision turns"),
    Metric("clarify share", "clarify", "decisions", True, "share of decision turns"),
    Metric("invalid share", "invalid", "decisions", True, "share of decision turns"),
    Metric("concerns disclosed", "concerns_disclosed", "episodes", False, "hidden concerns disclosed (0-3)"),
    Metric("full disclosure%", "full_disclosure", "episodes", True, "episodes disclosing all three"),
    Metric("dialogue length", "turns", "episodes", False, "assistant turns, opening included"),
    Metric("premature closure%", "premature_closure", "episodes", True, "confirmed on a non-gold option"),
    Metric("return", "return", "episodes", False, "summed env reward (with the run's reward options)", 2),
)
METRICS_BY_NAME = {m.name: m for m in METRICS}
OUTCOME_METRICS = ("1st%", "OptSat%", "SvcSat%")


def scenario_sums(episodes: Iterable[Mapping], item_ids: Sequence[str], metric: Metric) -> RatioSums:
    """Per-scenario sums of a metric's numerator and denominator, in ``item_ids`` order.

    Each episode mapping needs ``scenario_id`` and ``counts``; every scenario must appear.
    """
    position = {sid: i for i, sid in enumerate(item_ids)}
    num = np.zeros(len(item_ids))
    den = np.zeros(len(item_ids))
    seen: dict[str, int] = defaultdict(int)
    for ep in episodes:
        i = position.get(ep["item_id"])
        if i is None:
            continue
        num[i] += ep["counts"][metric.numerator]
        den[i] += ep["counts"][metric.denominator]
        seen[ep["item_id"]] += 1
    missing = [sid for sid in item_ids if sid not in seen]
    if missing:
        raise ValueError(
            f"{len(missing)} scenarios have no episode in this condition "
            f"(first: {missing[0]}); paired statistics need all of them"
        )
    return RatioSums(num, den)


def episode_scalars(record: Mapping) -> dict[str, float]:
    """What a trainer logs per finished episode (the ``EnvFamily.episode_scalars`` of Hear2Act)."""
    counts = record["counts"]
    return {
        "return": float(counts["return"]),
        "1st%": 100.0 * counts["success"],
        "premature closure%": 100.0 * counts["premature_closure"],
        "dialogue length": float(counts["turns"]),
        "invalid share%": 100.0 * counts["invalid"] / max(counts["decisions"], 1),
    }
