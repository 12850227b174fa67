"""The paper's six controls as planners (VoxReason §5, §6.2): each maps a case side to a
``PlannerOutput`` given what it is allowed to read, and its own output for the original side
when it plans the edited one.

* ``text_only``: reads the text records only; cites them, and plans the per-slot majority of
  the training cases' expected plans (it cannot see the source record, the decisive cue);
* ``oracle``: the source-label oracle, a deterministic reference: cites every record and plans
  the source key's row of the plan table;
* ``prior_only``: reads the source *emotion* alone; plans the per-slot majority of the training
  cases of that emotion (the global majority for an emotion training never saw); no citations;
* ``declared_delta``: cites every record; plans the original's gold plan, then the edit as that
  plan with the case's declared delta applied (a reference that knows the fixture's delta);
* ``citation_echo``: cites the text records, plans the original's gold plan, and echoes both
  on the edit (same citations, same plan);
* ``shuffled_delta``: as ``declared_delta``, but applies the declared delta of another case,
  drawn by a seeded permutation of the suite (the seed is the matrix's seed).

"Fitted" controls learn from the training split of the partition they are evaluated on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hear_gym.envs.deliveryplan.cases import SOURCE_KIND, Case, cases_by_id, generate_cases
from hear_gym.envs.deliveryplan.plan import SCORED_SLOTS, DeliveryPlan
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.splits import split_ids
from hear_gym.envs.deliveryplan.verifier import PlannerOutput


def majority_plan(plans: Iterable[DeliveryPlan]) -> DeliveryPlan:
    """Per slot, the most common value (ties: the value seen first)."""
    plans = list(plans)
    if not plans:
        raise ValueError("no plans to take a majority of")
    return DeliveryPlan(**{s: Counter(p.slot(s) for p in plans).most_common(1)[0][0] for s in SCORED_SLOTS})


def apply_delta(plan: DeliveryPlan, delta: Mapping[str, Any]) -> DeliveryPlan:
    return plan.replace(**{s: v if isinstance(v, str) else frozenset(v) for s, v in delta.items()})


def text_citations(case: Case, side: int) -> frozenset[str]:
    view = case.original if side == 0 else case.edited
    return frozenset(r.cue_id for r in view.records if r.kind != SOURCE_KIND)


@dataclass(frozen=True)
class Fitted:
    """What the fitted controls learn from one partition's training split."""

    global_plan: DeliveryPlan
    emotion_plans: dict[str, DeliveryPlan]

    @classmethod
    def from_split(cls, partition: str) -> Fitted:
        train = [cases_by_id()[i] for i in split_ids("train", partition)]
        by_emotion: dict[str, list[DeliveryPlan]] = {}
        for case in train:
            by_emotion.setdefault(case.original.source_key[0], []).append(case.original.expected_plan)
        return cls(
            majority_plan(c.original.expected_plan for c in train),
            {e: majority_plan(plans) for e, plans in by_emotion.items()},
        )


# (case, side, own original output, fitted, seed) -> output
Planner = Callable[[Case, int, PlannerOutput | None, Fitted, int], PlannerOutput]


def text_only(case, side, first, fitted, seed):
    return PlannerOutput(text_citations(case, side), fitted.global_plan)


def oracle(case, side, first, fitted, seed):
    view = case.original if side == 0 else case.edited
    return PlannerOutput(view.gold_evidence, PLAN_TABLE[view.source_key])


def prior_only(case, side, first, fitted, seed):
    emotion = (case.original if side == 0 else case.edited).source_key[0]
    return PlannerOutput(frozenset(), fitted.emotion_plans.get(emotion, fitted.global_plan))


def declared_delta(case, side, first, fitted, seed):
    if side == 0:
        return PlannerOutput(case.original.gold_evidence, case.original.expected_plan)
    return PlannerOutput(case.edited.gold_evidence, apply_delta(first.plan, case.declared_delta))


def citation_echo(case, side, first, fitted, seed):
    if side == 0:
        return PlannerOutput(text_citations(case, 0), case.original.expected_plan)
    return first


def shuffled_delta(case, side, first, fitted, seed):
    if side == 0:
        return PlannerOutput(case.original.gold_evidence, case.original.expected_plan)
    cases = generate_cases()
    order = np.random.default_rng(seed).permutation(len(cases))
    donor = cases[int(order[[c.case_id for c in cases].index(case.case_id)])]
    return PlannerOutput(case.edited.gold_evidence, apply_delta(first.plan, donor.declared_delta))


PLANNERS: dict[str, Planner] = {
    "text_only": text_only,
    "oracle": oracle,
    "prior_only": prior_only,
    "declared_delta": declared_delta,
    "citation_echo": citation_echo,
    "shuffled_delta": shuffled_delta,
}
