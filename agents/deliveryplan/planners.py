"""The paper's six controls as planners (VoxReason §5, §6.2), plus the blind edit and the
citation controls: each maps the case side on show (``ShownSide``, read from the prompt) to a
``PlannerOutput`` given what it is allowed to read, and, on the edited side, what it planned and
read on the original.

* ``text_only``: reads the text record only (the utterance); cites it, and plans the per-slot
  majority of the training plans (it cannot see the recordings, among them the decisive cue);
* ``oracle``: the source-label oracle, a deterministic reference: cites the records that license
  the plan (the source record; the utterance when the plan emphasises a word) and plans the
  source key's row of the plan table;
* ``prior_only``: reads the source *emotion* alone; plans the per-slot majority of the training
  plans of that emotion (the global majority for an emotion training never saw); no citations;
* ``declared_delta``: the oracle on the original; on the edit, its original plan with the
  declared delta applied (the change between the two keys' table rows);
* ``citation_echo``: cites the text record, plans the original's gold plan, and echoes both
  on the edit (the same record, the same plan);
* ``shuffled_delta``: as ``declared_delta``, but applies the declared delta of another case of
  the suite, drawn with the agent's seeded generator;
* ``blind_edit``: never opens the evidence: plans the training majority plan, and on the edit
  applies the declared delta most common in training (an editor guessing the change from the
  case structure alone);
* ``cite_all`` / ``cite_none`` / ``cite_position_<i>`` / ``cite_kind_<kind>``: citation
  controls (every record, none, the i-th listed, every record of one kind) with the training
  majority plan: what citing by rule, without reading, earns.

Planners that read a recording's labels read the source record's: the take whose statement is
the utterance (``ShownSide``), the rule a reader of the prompt applies.

Fitted planners learn from a partition's training material only (``splits.training_sides`` and
``training_pairs``): no held-out key reaches them, not even as the edit of a training case.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hear_gym.envs.deliveryplan.cases import (
    KIND_OF,
    OTHER_TAKE,
    RECORD_KINDS,
    RECORD_NAMES,
    SOURCE,
    UTTERANCE_KIND,
    cases_by_id,
    generate_cases,
    plan_delta,
)
from hear_gym.envs.deliveryplan.plan import SCORED_SLOTS, DeliveryPlan
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.splits import training_pairs, training_sides
from hear_gym.envs.deliveryplan.verifier import PlannerOutput

_RECORD_LINE = re.compile(r"^\[(e[0-9]{3})\] (\w+): (.*)$", re.MULTILINE)
_UTTERANCE = re.compile(r"^utterance: (.*) \(words ", re.MULTILINE)
_STATEMENT = re.compile(r'"([^"]*)"')
_LABELS = re.compile(r"emotion (\w+), intensity (\w+)")


@dataclass(frozen=True)
class ShownSide:
    """A case side as its prompt shows it: the listed records' ids and kinds in listing order,
    the records' ids by name (the take whose statement is the utterance is the source record,
    the other take the other line's), and the source labels when the prompt names them (access
    ``T``/``A+T``)."""

    listed: tuple[tuple[str, str], ...]  # (id, kind) in listing order
    ids: dict[str, str]  # record name -> id
    source_key: tuple[str, str] | None

    @classmethod
    def read(cls, text: str) -> ShownSide:
        lines = _RECORD_LINE.findall(text)
        utterance = _UTTERANCE.search(text)
        if utterance is None or sorted(k for _, k, _ in lines) != sorted(KIND_OF[n] for n in RECORD_NAMES):
            raise ValueError("the observation lists no DeliveryPlan records (is this a DeliveryPlan prompt?)")
        ids, source = {}, ""
        for cue, kind, content in lines:
            if kind == UTTERANCE_KIND:
                ids[UTTERANCE_KIND] = cue
                continue
            statement = _STATEMENT.search(content)
            name = (
                SOURCE if statement is not None and statement.group(1) == utterance.group(1) else OTHER_TAKE
            )
            ids[name] = cue
            source = content if name == SOURCE else source
        if set(ids) != set(RECORD_NAMES):
            raise ValueError(
                "the observation lists no take of its utterance (is this a DeliveryPlan prompt?)"
            )
        labels = _LABELS.match(source)
        listed = tuple((cue, kind) for cue, kind, _ in lines)
        return cls(listed, ids, None if labels is None else (labels.group(1), labels.group(2)))

    def cite(self, names: Iterable[str]) -> frozenset[str]:
        return frozenset(self.ids[n] for n in names)

    def of_kind(self, kind: str) -> list[str]:
        return [cue for cue, k in self.listed if k == kind]

    @property
    def key(self) -> tuple[str, str]:
        if self.source_key is None:
            raise ValueError("this planner reads the source labels: play it under access T")
        return self.source_key


def majority_plan(plans: Iterable[DeliveryPlan]) -> DeliveryPlan:
    """Per slot, the most common value (ties: the value seen first)."""
    plans = list(plans)
    if not plans:
        raise ValueError("no plans to take a majority of")
    return DeliveryPlan(**{s: Counter(p.slot(s) for p in plans).most_common(1)[0][0] for s in SCORED_SLOTS})


def apply_delta(plan: DeliveryPlan, delta: Mapping[str, Any]) -> DeliveryPlan:
    return plan.replace(**{s: v if isinstance(v, str) else frozenset(v) for s, v in delta.items()})


def licensed_records(plan: DeliveryPlan) -> frozenset[str]:
    """The records a plan rests on: the source record, and the utterance if it emphasises a word."""
    return frozenset({SOURCE, *([UTTERANCE_KIND] if plan.emphasis else [])})


TEXT_RECORDS = (UTTERANCE_KIND,)  # what text-only reads: the records that are not recordings


@dataclass(frozen=True)
class Fitted:
    """What the fitted controls learn from one partition's training material."""

    global_plan: DeliveryPlan
    emotion_plans: dict[str, DeliveryPlan]
    blind_delta: dict[str, Any]

    @classmethod
    def from_split(cls, partition: str) -> Fitted:
        cases = cases_by_id()
        views = [(cases[c].original, cases[c].edited)[s] for c, s in training_sides(partition)]
        by_emotion: dict[str, list[DeliveryPlan]] = {}
        for view in views:
            by_emotion.setdefault(view.source_key[0], []).append(view.expected_plan)
        global_plan = majority_plan(v.expected_plan for v in views)
        # the commonest training delta that changes the majority plan: the blind editor's guess
        deltas = [cases[c].declared_delta for c in training_pairs(partition)]
        counts = Counter(_frozen(d) for d in deltas if apply_delta(global_plan, d) != global_plan)
        blind = dict(counts.most_common(1)[0][0])
        return cls(global_plan, {e: majority_plan(p) for e, p in by_emotion.items()}, blind)


def _frozen(delta: Mapping[str, Any]) -> tuple:
    return tuple(sorted((s, v if isinstance(v, str) else frozenset(v)) for s, v in delta.items()))


@dataclass
class Memory:
    """What a planner keeps from the original side for the edit."""

    output: PlannerOutput | None = None
    key: tuple[str, str] | None = None


# (side on show, step, memory of the original, fitted, generator) -> output
Planner = Callable[[ShownSide, int, Memory, Fitted, np.random.Generator], PlannerOutput]


def text_only(shown, step, memory, fitted, rng):
    return PlannerOutput(shown.cite(TEXT_RECORDS), fitted.global_plan)


def oracle(shown, step, memory, fitted, rng):
    plan = PLAN_TABLE[shown.key]
    return PlannerOutput(shown.cite(licensed_records(plan)), plan)


def prior_only(shown, step, memory, fitted, rng):
    return PlannerOutput(frozenset(), fitted.emotion_plans.get(shown.key[0], fitted.global_plan))


def _edited(shown, memory, delta) -> PlannerOutput:
    plan = apply_delta(memory.output.plan, delta)
    return PlannerOutput(shown.cite(licensed_records(plan)), plan)


def declared_delta(shown, step, memory, fitted, rng):
    if step == 0:
        return oracle(shown, step, memory, fitted, rng)
    return _edited(shown, memory, plan_delta(PLAN_TABLE[memory.key], PLAN_TABLE[shown.key]))


def citation_echo(shown, step, memory, fitted, rng):
    if step == 0:
        return PlannerOutput(shown.cite(TEXT_RECORDS), PLAN_TABLE[shown.key])
    return PlannerOutput(shown.cite(TEXT_RECORDS), memory.output.plan)  # the same records, the same plan


def shuffled_delta(shown, step, memory, fitted, rng):
    if step == 0:
        return oracle(shown, step, memory, fitted, rng)
    cases = generate_cases()
    return _edited(shown, memory, cases[int(rng.integers(len(cases)))].declared_delta)


def blind_edit(shown, step, memory, fitted, rng):
    if step == 0:
        return PlannerOutput(shown.cite(TEXT_RECORDS), fitted.global_plan)
    return PlannerOutput(shown.cite(TEXT_RECORDS), apply_delta(memory.output.plan, fitted.blind_delta))


def citing(choose: Callable[[ShownSide], Iterable[str]]) -> Planner:
    def planner(shown, step, memory, fitted, rng):
        return PlannerOutput(frozenset(choose(shown)), fitted.global_plan)

    return planner


CITATION_CONTROLS: dict[str, Planner] = {
    "cite_all": citing(lambda shown: [cue for cue, _ in shown.listed]),
    "cite_none": citing(lambda shown: ()),
    **{
        f"cite_position_{i}": citing(lambda shown, i=i: [shown.listed[i][0]])
        for i in range(len(RECORD_NAMES))
    },
    **{f"cite_kind_{k}": citing(lambda shown, k=k: shown.of_kind(k)) for k in RECORD_KINDS},
}


def records_cited(control: str) -> int:
    """How many records citation control ``control`` cites on every case side."""
    if control == "cite_all":
        return len(RECORD_NAMES)
    if control.startswith("cite_kind_"):
        return sum(KIND_OF[name] == control.removeprefix("cite_kind_") for name in RECORD_NAMES)
    return 0 if control == "cite_none" else 1


PLANNERS: dict[str, Planner] = {
    "text_only": text_only,
    "oracle": oracle,
    "prior_only": prior_only,
    "declared_delta": declared_delta,
    "citation_echo": citation_echo,
    "shuffled_delta": shuffled_delta,
    "blind_edit": blind_edit,
    **CITATION_CONTROLS,
}
