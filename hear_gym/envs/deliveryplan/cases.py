"""The case suite's types and its deterministic generator (VoxReason §3, §4.1, Appendix C).

A ``Case`` fixes a target utterance, a role profile and a scene label (the case's context,
shown to the planner) and three evidence records, the ones a planner cites:

* ``utterance``: the target line, of kind ``utterance``;
* ``source``: the *source record*, a derived label naming the source emotion and intensity of a
  RAVDESS-style recording of the target line, with its voice;
* ``other_take``: the same speaker's recording of the suite's other line, in the original key,
  also of kind ``source``. It licenses nothing: a plan for one line rests on the take of that
  line, and which of the two takes that is can only be read off their statements.

Its expected plan is the source key's row of the plan table. Its ``edit`` is the one-cue
counterfactual: the source record replaced by one of the edited key, every other field
unchanged, and the declared plan delta (the slots whose expected value changes, with their new
values).

The gold evidence of a side is the records that license its plan: the source record always
(every prosodic field), and the utterance record when the plan emphasises one of its words
(which word). Records of both kinds are gold as often as a record drawn at random, and which of
the two source-kind records is the source depends on the case: neither kind nor listing place
tells a citer which records to cite (tested). The role and the scene fix who speaks and where,
which no plan field depends on, so they are context and not evidence records: a record kind
that is never gold would make the other kinds gold more often than chance.

Records are named by their role in the case here (``RECORD_NAMES``). The cue ids a planner sees
and cites are drawn per episode and side by the env from its seeded generator, with the order the
records are listed in (``hear_gym.envs.deliveryplan.display``): an id carries no information
about its record.

The generator (``generate_cases(seed)``) is the whole construction: 100 cases over the 15 keys
with ``KEY_COUNTS`` cases each (counts chosen so the three partitions of ``splits`` have the
paper's sizes), utterance and role drawn per case from ``np.random.default_rng(seed)``, and the
voices dealt per key so that half of every key's cases are spoken by a held-out voice
(``TEST_VOICES``): the cases where listening is measured keep the suite's mix of keys and edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from hear_gym.envs.deliveryplan.plan import SCORED_SLOTS, SOURCE_KEYS, DeliveryPlan, key_name
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE, edited_key

GENERATOR_VERSION = "deliveryplan-cases-3"
DEFAULT_SEED = 2609_03203
N_CASES = 100
# the two RAVDESS statements are the suite's two target utterances and the source statements
UTTERANCES = ("Kids are talking by the door", "Dogs are sitting by the door")
ROLES = ("audiobook narrator", "customer support agent")
SCENE = "read the line aloud to a listener"
# the evidence voices: probes train on the first six and are scored on the four held out
TRAIN_VOICES: tuple[str, ...] = ("m1", "m2", "m3", "f1", "f2", "f3")
TEST_VOICES: tuple[str, ...] = ("m4", "m7", "f4", "f5")
VOICES = TRAIN_VOICES + TEST_VOICES
HELD_OUT_SHARE = 0.5  # of every key's cases, spoken by a held-out voice: where listening is measured
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
UTTERANCE_KIND, SOURCE_KIND = "utterance", "source"
RECORD_KINDS = (UTTERANCE_KIND, SOURCE_KIND)  # what the prompt calls a record
SOURCE, OTHER_TAKE = "source", "other_take"
RECORD_NAMES = (UTTERANCE_KIND, SOURCE, OTHER_TAKE)  # each record of a case side, by its role
KIND_OF: dict[str, str] = {UTTERANCE_KIND: UTTERANCE_KIND, SOURCE: SOURCE_KIND, OTHER_TAKE: SOURCE_KIND}


@dataclass(frozen=True)
class EvidenceRecord:
    name: str  # one of RECORD_NAMES, the record's role within its case side
    text: str  # the record's content as text (for a recording: its statement)
    emotion: str | None = None  # source records only: the derived label
    intensity: str | None = None
    voice: str | None = None

    @property
    def kind(self) -> str:
        return KIND_OF[self.name]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind} | {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class CaseView:
    """One side of a pair (the original or the edited case): what a planner is given and what it
    is scored against."""

    records: tuple[EvidenceRecord, ...]
    source_key: tuple[str, str]
    expected_plan: DeliveryPlan

    def record(self, name: str) -> EvidenceRecord:
        return next(r for r in self.records if r.name == name)

    @property
    def source(self) -> EvidenceRecord:
        return self.record(SOURCE)

    @property
    def gold_evidence(self) -> frozenset[str]:
        """The records that license the plan (by name): the source record, and the utterance
        record when the plan emphasises one of its words."""
        return frozenset({SOURCE, *([UTTERANCE_KIND] if self.expected_plan.emphasis else [])})

    @property
    def decisive_cue(self) -> str:
        """The cue the edit changes: the source record."""
        return SOURCE


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


def _take(name: str, key: tuple[str, str], statement: str, voice: str) -> EvidenceRecord:
    emotion, intensity = key
    return EvidenceRecord(name, statement, emotion, intensity, voice)


def _build_case(case_id: str, key: tuple[str, str], utterance: str, role: str, voice: str) -> Case:
    line = EvidenceRecord(UTTERANCE_KIND, utterance)
    other_line = next(u for u in UTTERANCES if u != utterance)
    other_take = _take(OTHER_TAKE, key, other_line, voice)
    edit = edited_key(*key)
    original = CaseView((line, _take(SOURCE, key, utterance, voice), other_take), key, PLAN_TABLE[key])
    edited = CaseView((line, _take(SOURCE, edit, utterance, voice), other_take), edit, PLAN_TABLE[edit])
    return Case(
        case_id,
        utterance,
        role,
        SCENE,
        original,
        edited,
        plan_delta(original.expected_plan, edited.expected_plan),
    )


def _dealt_voices(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` voices for one key's cases: half of them (rounded) drawn from ``TEST_VOICES``, the
    rest from ``TRAIN_VOICES``, in a drawn order."""
    held_out = round(n * HELD_OUT_SHARE)
    voices = [str(v) for v in rng.choice(TEST_VOICES, held_out)]
    voices += [str(v) for v in rng.choice(TRAIN_VOICES, n - held_out)]
    return [voices[i] for i in rng.permutation(n)]


@cache
def generate_cases(seed: int = DEFAULT_SEED) -> tuple[Case, ...]:
    """The 100 cases, in key order then draw order; ``case_id`` is ``vr-000`` .. ``vr-099``."""
    rng = np.random.default_rng(seed)
    cases = []
    for key in SOURCE_KEYS:
        for voice in _dealt_voices(rng, KEY_COUNTS[key]):
            case_id = f"vr-{len(cases):03d}"
            utterance = UTTERANCES[int(rng.integers(len(UTTERANCES)))]
            role = ROLES[int(rng.integers(len(ROLES)))]
            cases.append(_build_case(case_id, key, utterance, role, voice))
    return tuple(cases)


@cache
def cases_by_id(seed: int = DEFAULT_SEED) -> dict[str, Case]:
    return {c.case_id: c for c in generate_cases(seed)}
