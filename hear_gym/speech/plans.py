"""Prosody plans: what a delivery label means acoustically, as data.

A *plan table* (``delivery_plans_<name>.json``) maps every delivery label of the paper's
Table 12 (and ``neutral`` for the opening request) to rate, pitch level, pitch range, gain, lead
and clause pauses and a final-contour distribution, and says how much speakers and utterances
vary. Two tables ship, selected by name (``prosody=`` on the env, the CLI and ``RenderRequest``):

* ``paper`` (the default): calibrated so that resolved vs reluctant acceptance is about as hard
  to hear as for the paper's human listeners (0.92): each label moves a few cues a little, the
  cues of one label disagree, and speaker and utterance variation as large as the label effects
  blur every single cue (``benchmarks/hear2act/speech_validation.py`` measures it).
* ``clear``: the original table; labels far apart on every cue, small variation. Near-perfectly
  separable by one scalar; kept as the easy reference.

``plan_for`` is the deterministic variation function. For a label, with uniforms ``u`` in
[-1, 1) hashed from the request's speaker key (table, language, voice, speaker: the same for all
of a speaker's turns; a Hear2Act scenario's user is one speaker, VoiceGate's voices are theirs)
and from its utterance key (the speaker key plus label and text):

1. expressiveness ``e = 1 + speaker.expressiveness * u``: the speaker shows every label's
   deviation from the table's ``neutral`` plan ``e`` times (numbers only; the contour is drawn);
2. the speaker's habitual offsets, then the utterance's: rate, lead and clause pauses are
   scaled by ``(1 + spread * u)`` (relative), pitch, range (eSpeak points) and gain (dB) are
   shifted by ``spread * u``;
3. the final contour is drawn from the label's distribution with one more utterance uniform.

The same request always gets the same plan; no global random state is involved.

A family with labels of its own ships its own table in the same JSON form (with a ``baseline``
label in place of ``neutral`` if it likes) and varies it the same way: ``parse_plan_table`` and
``vary_plan``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from importlib import resources
from typing import Literal

Contour = Literal["fall", "rise", "level"]
CONTOURS: tuple[str, ...] = ("fall", "rise", "level")
NEUTRAL_DELIVERY = "neutral"  # every table's baseline; the label variation is measured from it
PROSODY_TABLES: tuple[str, ...] = ("paper", "clear")
DEFAULT_PROSODY = "paper"


@dataclass(frozen=True)
class ProsodyPlan:
    """One utterance's plan. rate: words/min; pitch, range: eSpeak 0-100; gain_db: re neutral."""

    label: str
    rate: float
    pitch: float
    range: float
    gain_db: float
    lead_pause_ms: float
    clause_pause_ms: float
    final_contour: Contour

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Spread:
    """Half-widths of uniform variation: relative for rate and pauses, additive otherwise."""

    rate: float = 0.0
    pitch: float = 0.0
    range: float = 0.0
    gain_db: float = 0.0
    lead_pause: float = 0.0
    clause_pause: float = 0.0
    expressiveness: float = 0.0  # speakers only


@dataclass(frozen=True)
class PlanTable:
    name: str
    labels: dict[str, ProsodyPlan]  # final_contour is the most likely contour
    contours: dict[str, tuple[tuple[str, float], ...]]  # label -> (contour, probability)
    speaker: Spread
    utterance: Spread
    baseline: str = NEUTRAL_DELIVERY  # the label whose plan every deviation is measured from


def check_prosody(name: str) -> str:
    if name not in PROSODY_TABLES:
        raise ValueError(f"unknown prosody plan table {name!r}; tables: {list(PROSODY_TABLES)}")
    return name


@cache
def plan_table(name: str = DEFAULT_PROSODY) -> PlanTable:
    check_prosody(name)
    raw = json.loads((resources.files("hear_gym.speech") / f"delivery_plans_{name}.json").read_text("utf-8"))
    return parse_plan_table(name, raw)


def parse_plan_table(name: str, raw: dict) -> PlanTable:
    """A plan table from its JSON form (``labels``, ``speaker`` and ``utterance`` spreads), so a
    family can ship its own table (labels of its own) and vary it with ``vary_plan``."""
    labels, contours = {}, {}
    for label, values in raw["labels"].items():
        values = dict(values)  # the caller's dict stays as it was
        contour = values.pop("final_contour")
        dist = {contour: 1.0} if isinstance(contour, str) else dict(contour)
        if set(dist) - set(CONTOURS) or abs(sum(dist.values()) - 1) > 1e-9:
            raise ValueError(
                f"{name}/{label}: final_contour must be one of {CONTOURS} or probabilities "
                f"over them summing to 1, got {contour!r}"
            )
        contours[label] = tuple((c, dist[c]) for c in CONTOURS if dist.get(c))
        labels[label] = ProsodyPlan(label=label, final_contour=max(dist, key=dist.get), **values)
    baseline = raw.get("baseline", NEUTRAL_DELIVERY)
    if baseline not in labels:
        raise ValueError(f"plan table {name!r} lacks its baseline plan {baseline!r}")
    spreads = {key: Spread(**raw.get(key, {})) for key in ("speaker", "utterance")}
    return PlanTable(name, labels, contours, **spreads, baseline=baseline)


def base_plans(prosody: str = DEFAULT_PROSODY) -> dict[str, ProsodyPlan]:
    return plan_table(prosody).labels


def plan_for(label: str, prosody: str, speaker_key: str, utterance_key: str) -> ProsodyPlan:
    """The plan for ``label`` in table ``prosody``, varied for this speaker and utterance (the
    keys should name the table too, so that tables draw independently)."""
    return vary_plan(plan_table(prosody), label, speaker_key, utterance_key)


def vary_plan(table: PlanTable, label: str, speaker_key: str, utterance_key: str) -> ProsodyPlan:
    """``label``'s plan in ``table``, varied for this speaker and utterance (module docstring)."""
    try:
        base = table.labels[label]
    except KeyError:
        raise ValueError(
            f"unknown delivery label {label!r} in table {table.name!r}; labels: {list(table.labels)}"
        ) from None
    neutral = table.labels[table.baseline]
    s = _uniforms(f"speaker|{speaker_key}", 7)
    u = _uniforms(utterance_key, 7)
    e = 1 + table.speaker.expressiveness * s[6]
    shown = {
        f.name: getattr(neutral, f.name) + e * (getattr(base, f.name) - getattr(neutral, f.name))
        for f in fields(ProsodyPlan)
        if f.name not in ("label", "final_contour")
    }

    def varied(name: str, spread_name: str, i: int, relative: bool) -> float:
        value = shown[name]
        for spread, draw in ((table.speaker, s[i]), (table.utterance, u[i])):
            width = getattr(spread, spread_name)
            value = value * (1 + width * draw) if relative else value + width * draw
        return value

    return replace(
        base,
        rate=round(varied("rate", "rate", 0, True), 1),
        pitch=round(min(99.0, max(0.0, varied("pitch", "pitch", 1, False))), 1),
        range=round(min(99.0, max(0.0, varied("range", "range", 2, False))), 1),
        gain_db=round(varied("gain_db", "gain_db", 3, False), 2),
        lead_pause_ms=round(max(0.0, varied("lead_pause_ms", "lead_pause", 4, True))),
        clause_pause_ms=round(max(0.0, varied("clause_pause_ms", "clause_pause", 5, True))),
        final_contour=_draw(table.contours[label], (u[6] + 1) / 2),
    )


def _draw(distribution: tuple[tuple[str, float], ...], p: float) -> str:
    for contour, probability in distribution:
        p -= probability
        if p < 0:
            return contour
    return distribution[-1][0]


def _uniforms(key: str, n: int) -> list[float]:
    """n numbers in [-1, 1) derived from ``key`` only."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=2 * n).digest()
    return [int.from_bytes(digest[2 * i : 2 * i + 2], "little") / 32768.0 - 1.0 for i in range(n)]
