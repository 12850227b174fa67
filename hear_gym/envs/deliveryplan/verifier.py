"""The VoxReason verifier (§4.3, Appendix B): evidence by cue identity, plan slots, the
citation-required grounded score, and counterfactual locality over a pair of plans.

Per case side (``score_case``), with C the cited cue ids and G the gold evidence:

* precision P = |C & G| / |C|, recall R = |C & G| / |G|, F1 = 2PR / (P + R); an undefined term
  (|C| = 0, |G| = 0, P + R = 0) is 0 (Appendix B);
* decisive-cue recall: 1 when the decisive cue (the record the edit changes) is cited;
* hallucinated-evidence rate 1 - P when evidence is predicted (else 0), uncited-evidence rate
  1 - R when gold evidence exists (else 0): zero when their reference set is absent;
* plan-slot accuracy: the mean over the eight scored slots (seven scalar fields by exact level,
  emphasis by exact normalized-set match);
* grounded score ``(4 * F1 + 3 * plan_slot) / 7`` and the citation-required grounded score
  ``Gcite = grounded * R``. The paper says only that the grounded score is "weighted" and defined
  by its implementation, and that Gcite multiplies it by evidence recall; the 4:3 weights are
  ours, chosen because they reproduce the paper's one fully reported row (text-only: F1 0.857,
  plan-slot 0.185, R 0.75 -> Gcite 0.427). A single row pins them, so treat them as a fit.

Per pair (``score_pair``: the planner's original and edited plans, the declared delta D):

* required-change accuracy: the share of slots in D whose edited value equals D's value *and*
  differs from the planner's own original value ("a required field earns credit only when it
  changes to the declared value");
* preservation: the share of the other slots the planner kept unchanged; unexpected-change rate
  is 1 - preservation;
* counterfactual consistency: required-change accuracy x preservation (1 only for a plan pair
  that makes every licensed change and no other; 0 when either part is 0). The paper "combines"
  the two without a formula; the product is our choice.

A malformed output (``MALFORMED``: the text parser found no valid JSON plan, §``actions``) cites
nothing and has no plan: every positive metric of its side is 0, its uncited rate 1, and a pair
with a malformed side has required-change accuracy and preservation 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hear_gym.envs.deliveryplan.plan import SCORED_SLOTS, DeliveryPlan

F1_WEIGHT, PLAN_WEIGHT = 4 / 7, 3 / 7
CASE_METRICS = (
    "evidence_precision",
    "evidence_recall",
    "evidence_f1",
    "decisive_cue_recall",
    "hallucinated_rate",
    "uncited_rate",
    "plan_slot_accuracy",
    "emphasis_exact",
    "grounded_score",
    "gcite",
)
PAIR_METRICS = (
    "required_change_accuracy",
    "preservation_rate",
    "unexpected_change_rate",
    "counterfactual_consistency",
)


@dataclass(frozen=True)
class PlannerOutput:
    """What a planner returns for one case side: the cue ids it cites and its plan (``None``
    for a malformed output)."""

    citations: frozenset[str]
    plan: DeliveryPlan | None

    @property
    def malformed(self) -> bool:
        return self.plan is None


MALFORMED = PlannerOutput(frozenset(), None)


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def evidence_scores(cited: Iterable[str], gold: Iterable[str], decisive: str | None) -> dict[str, float]:
    cited, gold = frozenset(cited), frozenset(gold)
    hits = len(cited & gold)
    precision, recall = _ratio(hits, len(cited)), _ratio(hits, len(gold))
    return {
        "evidence_precision": precision,
        "evidence_recall": recall,
        "evidence_f1": _ratio(2 * precision * recall, precision + recall),
        "decisive_cue_recall": float(decisive is not None and decisive in cited),
        "hallucinated_rate": 1.0 - precision if cited else 0.0,
        "uncited_rate": 1.0 - recall if gold else 0.0,
    }


def slot_matches(predicted: DeliveryPlan | None, expected: DeliveryPlan) -> dict[str, bool]:
    """Per scored slot: does the prediction equal the expected value (emphasis: exact set)?"""
    if predicted is None:
        return dict.fromkeys(SCORED_SLOTS, False)
    return {s: predicted.slot(s) == expected.slot(s) for s in SCORED_SLOTS}


def score_case(
    output: PlannerOutput, gold: Iterable[str], decisive: str | None, expected: DeliveryPlan
) -> dict[str, float]:
    scores = evidence_scores(output.citations, gold, decisive)
    matches = slot_matches(output.plan, expected)
    scores["plan_slot_accuracy"] = float(np.mean([matches[s] for s in SCORED_SLOTS]))
    scores["emphasis_exact"] = float(matches["emphasis"])
    scores["grounded_score"] = F1_WEIGHT * scores["evidence_f1"] + PLAN_WEIGHT * scores["plan_slot_accuracy"]
    scores["gcite"] = scores["grounded_score"] * scores["evidence_recall"]
    return scores


def score_pair(
    original: DeliveryPlan | None, edited: DeliveryPlan | None, declared_delta: Mapping[str, Any]
) -> dict[str, float]:
    required = [s for s in SCORED_SLOTS if s in declared_delta]
    stable = [s for s in SCORED_SLOTS if s not in declared_delta]
    if original is None or edited is None:
        changed_right = [False] * len(required)
        kept = [False] * len(stable)
    else:
        changed_right = [
            edited.slot(s) == _normalized(declared_delta[s]) and edited.slot(s) != original.slot(s)
            for s in required
        ]
        kept = [edited.slot(s) == original.slot(s) for s in stable]
    required_accuracy = _ratio(sum(changed_right), len(required))
    preservation = _ratio(sum(kept), len(stable))
    return {
        "required_change_accuracy": required_accuracy,
        "preservation_rate": preservation,
        "unexpected_change_rate": 1.0 - preservation if stable else 0.0,
        "counterfactual_consistency": required_accuracy * preservation,
    }


def _normalized(value: Any) -> Any:
    return value if isinstance(value, str) else frozenset(value)
