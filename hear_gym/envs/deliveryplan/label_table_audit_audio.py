"""Audit the speech layer's own delivery plans with the VoxReason verifier: express each
delivery-label plan table (``hear_gym/speech/delivery_plans_<table>.json``, the Hear2Act user's
Table 12 labels) as DeliveryPlan cases, and check that a one-label edit changes only the linked
fields.

* ``as_delivery_plan`` reads a speech-layer prosody plan as a ``DeliveryPlan``: each numeric
  control is ``low``/``mid``/``high`` by whether it lies below, within or above a band around
  the table's neutral plan (``BANDS``: rate 5%, pitch 3 points, about half a semitone, range 8
  points, gain 1 dB, clause pause 20%); contour is the plan's final contour; the tables have no
  voice quality or emphasis (``modal``, no emphasis).
* A case is a label; the edit of label A to label B declares the delta between the two labels'
  *table* plans (the linked fields). What the simulator renders is the *varied* plan
  (``plans.plan_for``: per speaker and per utterance), so the audit scores, with the verifier's
  pair metrics, the varied plans of A and B for one speaker and one text against that delta: a
  field that changes level but is not linked is an unexpected change.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from hear_gym.envs.deliveryplan.cases import plan_delta
from hear_gym.envs.deliveryplan.plan import DeliveryPlan
from hear_gym.envs.deliveryplan.verifier import PAIR_METRICS, score_pair
from hear_gym.speech.plans import ProsodyPlan, plan_for, plan_table

# field -> (speech-layer control, half-width of the "mid" band, relative?)
BANDS: dict[str, tuple[str, float, bool]] = {
    "rate": ("rate", 0.05, True),
    "pitch_level": ("pitch", 3.0, False),
    "pitch_range": ("range", 8.0, False),
    "energy": ("gain_db", 1.0, False),
    "pause": ("clause_pause_ms", 0.20, True),
}
AUDIT_TEXT = "Okay, sounds good."


def _level(value: float, reference: float, width: float, relative: bool) -> str:
    low, high = (
        (reference * (1 - width), reference * (1 + width))
        if relative
        else (reference - width, reference + width)
    )
    return "low" if value < low else "high" if value > high else "mid"


def as_delivery_plan(plan: ProsodyPlan, neutral: ProsodyPlan) -> DeliveryPlan:
    levels = {
        field: _level(getattr(plan, control), getattr(neutral, control), width, relative)
        for field, (control, width, relative) in BANDS.items()
    }
    return DeliveryPlan(**levels, contour=plan.final_contour, voice_quality="modal")


def table_plans(prosody: str) -> dict[str, DeliveryPlan]:
    """Every label of the table as a DeliveryPlan (its unvaried table plan)."""
    table = plan_table(prosody)
    neutral = table.labels[table.baseline]
    return {label: as_delivery_plan(plan, neutral) for label, plan in table.labels.items()}


@dataclass(frozen=True)
class EditAudit:
    before: str
    after: str
    speaker: str
    linked: tuple[str, ...]  # the fields the table links to this edit
    unexpected: tuple[str, ...]  # unlinked fields whose level the varied plans changed
    scores: dict[str, float]  # the verifier's pair metrics of the varied plans


def audit_edits(prosody: str, speakers: tuple[str, ...], text: str = AUDIT_TEXT) -> list[EditAudit]:
    """Every ordered pair of distinct labels x speaker (speech-layer speaker keys)."""
    table = plan_table(prosody)
    neutral = table.labels[table.baseline]
    declared = table_plans(prosody)
    out = []
    for before, after in permutations(table.labels, 2):
        delta = plan_delta(declared[before], declared[after])
        for speaker in speakers:
            key = f"{prosody}|en|{speaker}|{speaker}"

            def varied(label: str, key: str = key) -> DeliveryPlan:
                return as_delivery_plan(plan_for(label, prosody, key, f"{key}|{label}|{text}"), neutral)

            original, edited = varied(before), varied(after)
            unexpected = tuple(f for f in plan_delta(original, edited) if f not in delta)
            scores = score_pair(original, edited, delta)
            out.append(EditAudit(before, after, speaker, tuple(sorted(delta)), unexpected, scores))
    return out


def summarize(audits: list[EditAudit]) -> dict[str, float]:
    """Mean pair metrics; edits with no linked field count toward preservation only."""
    return {m: float(np.mean([a.scores[m] for a in audits])) for m in PAIR_METRICS}
