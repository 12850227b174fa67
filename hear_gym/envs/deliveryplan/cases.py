"""The case suite's types and its deterministic generator (VoxReason §3, §4.1, Appendix C).

A ``Case`` fixes a target utterance, a role profile, a scene label and four evidence records
(the utterance, the role, the scene, and one *source record*: a derived label naming the source
emotion and intensity of a RAVDESS-style recording, with its statement and voice). Its expected
plan is the source key's row of the plan table. Its ``edit`` is the one-cue counterfactual: the
source record replaced by one of the edited key, every other field unchanged, and the declared
plan delta (the slots whose expected value changes, with their new values).

The gold evidence of a side is the records that license its plan: the source record always
(every prosodic field), and the utterance record when the plan emphasises one of its words
(which word). The role and the scene fix who speaks and where, which no plan field depends on
here, so they are never gold. How many records are gold therefore depends on the source key.

Records are named by their kind here. The cue ids a planner sees and cites are drawn per
episode by the env from its seeded generator, with the order the records are listed in
(``hear_gym.envs.deliveryplan.display``): an id carries no information about its record.

The generator (``generate_cases(seed)``) is the whole construction: 100 cases over the 15 keys
with ``KEY_COUNTS`` cases each (counts chosen so the three partitions of ``splits`` have the
paper's sizes), utterance, role and voice drawn per case from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from hear_gym.envs.deliveryplan.plan import SCORED_SLOTS, SOURCE_KEYS, DeliveryPlan, key_name
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE, edited_key

GENERATOR_VERSION = "deliveryplan-cases-2"
DEFAULT_SEED = 2609_03203
N_CASES = 100
# the two RAVDESS statements are the suite's two target utterances and the source statements
UTTERANCES = ("Kids are talking by the door", "Dogs are sitting by the door")
ROLES = ("audiobook narrator", "customer support agent")
SCENE = "read the line aloud to a listener"
VOICES = ("f1", "f2", "f3", "f4", "f5", "m1", "m2", "m3", "m4", "m7")  # the evidence voices (all ten)
# cases per key: 100 in all; emotion totals make the source-emotion-disjoint 56/12/32 split and
# key totals the source-key-disjoint 60/16/24 split (see ``splits``)
KEY_COUNTS: dict[tuple[str, str], int] = {
    ("neutral", "normal"): 4,
    ("calm", "normal"): 7,
    ("calm", "strong"): 6,
    ("happy", "normal"): 7,
    ("happy", "strong"): 6,
    ("sad", "normal"): 7,
    ("sad", "strong"): 6,
    ("angry", "normal"): 7,
    ("angry", "strong"): 6,
    ("fearful", "normal"): 6,
    ("fearful", "strong"): 6,
    ("disgust", "normal"): 8,
    ("disgust", "strong"): 8,
    ("surprised", "normal"): 8,
    ("surprised", "strong"): 8,
}
RECORD_KINDS = ("utterance", "role", "scene", "source")
SOURCE_KIND = "source"


@dataclass(frozen=True)
class EvidenceRecord:
    kind: str  # one of RECORD_KINDS, the record's name within its case side
    text: str  # the record's content as text (for the source record: its statement)
    emotion: str | None = None  # source records only: the derived label
    intensity: str | None = None
    voice: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class CaseView:
    """One side of a pair (the original or the edited case): what a planner is given and what it
    is scored against."""

    records: tuple[EvidenceRecord, ...]
    source_key: tuple[str, str]
    expected_plan: DeliveryPlan

    @property
    def source(self) -> EvidenceRecord:
        return next(r for r in self.records if r.kind == SOURCE_KIND)

    @property
    def gold_evidence(self) -> frozenset[str]:
        """The records that license the plan (by kind): the source record, and the utterance
        record when the plan emphasises one of its words."""
        return frozenset({SOURCE_KIND, *(["utterance"] if self.expected_plan.emphasis else [])})

    @property
    def decisive_cue(self) -> str:
        """The cue the edit changes: the source record."""
        return SOURCE_KIND


@dataclass(frozen=True)
class Case:
    case_id: str
    utterance: str
    role: str
    scene: str
    original: CaseView
    edited: CaseView
    declared_delta: dict[str, Any] = field(hash=False)  # slot -> the edited plan's value

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.utterance.split())

    def as_dict(self) -> dict[str, Any]:
        def view(v: CaseView) -> dict[str, Any]:
            return {
                "records": [r.as_dict() for r in v.records],
                "source_key": key_name(*v.source_key),
                "expected_plan": v.expected_plan.as_dict(),
            }

        delta = {k: sorted(v) if k == "emphasis" else v for k, v in self.declared_delta.items()}
        return {
            "case_id": self.case_id,
            "utterance": self.utterance,
            "role": self.role,
            "scene": self.scene,
            "original": view(self.original),
            "edited": view(self.edited),
            "declared_delta": delta,
            "generator_version": GENERATOR_VERSION,
        }


def plan_delta(before: DeliveryPlan, after: DeliveryPlan) -> dict[str, Any]:
    return {s: after.slot(s) for s in SCORED_SLOTS if before.slot(s) != after.slot(s)}


def _source_record(key: tuple[str, str], statement: str, voice: str) -> EvidenceRecord:
    emotion, intensity = key
    return EvidenceRecord(SOURCE_KIND, statement, emotion, intensity, voice)


def _build_case(
    case_id: str, key: tuple[str, str], utterance: str, role: str, statement: str, voice: str
) -> Case:
    text_records = tuple(
        EvidenceRecord(kind, text)
        for kind, text in (("utterance", utterance), ("role", role), ("scene", SCENE))
    )
    edit = edited_key(*key)
    original = CaseView((*text_records, _source_record(key, statement, voice)), key, PLAN_TABLE[key])
    edited = CaseView((*text_records, _source_record(edit, statement, voice)), edit, PLAN_TABLE[edit])
    return Case(
        case_id,
        utterance,
        role,
        SCENE,
        original,
        edited,
        plan_delta(original.expected_plan, edited.expected_plan),
    )


@cache
def generate_cases(seed: int = DEFAULT_SEED) -> tuple[Case, ...]:
    """The 100 cases, in key order then draw order; ``case_id`` is ``vr-000`` .. ``vr-099``."""
    rng = np.random.default_rng(seed)
    cases = []
    for key in SOURCE_KEYS:
        for _ in range(KEY_COUNTS[key]):
            case_id = f"vr-{len(cases):03d}"
            utterance = UTTERANCES[int(rng.integers(len(UTTERANCES)))]
            role = ROLES[int(rng.integers(len(ROLES)))]
            statement = UTTERANCES[int(rng.integers(len(UTTERANCES)))]
            voice = VOICES[int(rng.integers(len(VOICES)))]
            cases.append(_build_case(case_id, key, utterance, role, statement, voice))
    return tuple(cases)


@cache
def cases_by_id(seed: int = DEFAULT_SEED) -> dict[str, Case]:
    return {c.case_id: c for c in generate_cases(seed)}
