"""Close the loop through synthesis: render a ``DeliveryPlan`` with the speech layer's renderers
and measure that each field moves the audio in the planned direction.

Rendering (``render_plan``): every scalar field's level sets one control of a speech-layer
prosody plan (``LEVEL_CONTROLS``: rate in words/min, pitch level and range in eSpeak points, gain
in dB, lead and clause pauses in ms; contour is the final contour), with no speaker or utterance
variation, so two plans differ in audio only where they differ in fields. ``voice_quality`` has
no control in either renderer; ``render_plan`` approximates it after rendering by a spectral tilt
(``TILT_COEFFICIENT``: breathy steeper, tense flatter than modal), which is only the spectral
part of those qualities (no aspiration noise, no change in glottal timing). ``emphasis`` is not
rendered: the speech layer speaks plain text (no SSML, which would bring back eSpeak's state
between utterances), and neither renderer can stress one word; it is reported as unsupported.

Measurement (``CUES``): per field, one scalar of the rendered audio and the order of the field's
levels along it (rate -> speech duration, shorter is faster; pitch level -> mean F0; pitch range
-> F0 5-95% range; energy -> mean intensity; pause -> total silence, lead plus internal; contour
-> F0 slope over the last voiced 0.4 s; voice quality -> spectral tilt). ``one_field_edits``
edits one field of a plan to each other level; ``agreement`` is whether the cue moved the way
the levels' order says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.signal import lfilter, welch

from hear_gym.envs.deliveryplan.plan import FIELD_LEVELS, PLAN_FIELDS, DeliveryPlan
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features
from hear_gym.speech.plans import ProsodyPlan
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest, make_renderer

SYNTHESIS_PROSODY = "deliveryplan-synthesis"
LEVEL_CONTROLS: dict[str, dict[str, dict[str, float]]] = {
    "rate": {"low": {"rate": 145}, "mid": {"rate": 175}, "high": {"rate": 205}},
    "pitch_level": {"low": {"pitch": 40}, "mid": {"pitch": 50}, "high": {"pitch": 60}},
    "pitch_range": {"low": {"range": 25}, "mid": {"range": 50}, "high": {"range": 75}},
    "energy": {"low": {"gain_db": -5.0}, "mid": {"gain_db": 0.0}, "high": {"gain_db": 5.0}},
    "pause": {
        "low": {"lead_pause_ms": 50, "clause_pause_ms": 80},
        "mid": {"lead_pause_ms": 200, "clause_pause_ms": 200},
        "high": {"lead_pause_ms": 450, "clause_pause_ms": 450},
    },
}
TILT_COEFFICIENT = {"breathy": -0.6, "modal": 0.0, "tense": 0.6}  # see ``tilt``
UNSUPPORTED = ("emphasis",)
CACHE_BYTES = 64 * 2**20


def prosody_plan(plan: DeliveryPlan) -> ProsodyPlan:
    """The speech-layer plan a ``DeliveryPlan`` renders with (voice quality is applied after)."""
    controls: dict[str, float] = {}
    for field, levels in LEVEL_CONTROLS.items():
        controls.update(levels[plan.slot(field)])
    return ProsodyPlan(label=_plan_name(plan), final_contour=plan.contour, **controls)


def _plan_name(plan: DeliveryPlan) -> str:
    return json.dumps(plan.as_dict(), sort_keys=True)


@dataclass(frozen=True)
class PlanRequest(RenderRequest):
    """A render request for one ``DeliveryPlan`` (``delivery`` is the plan as sorted JSON)."""

    prosody: str = SYNTHESIS_PROSODY

    def __post_init__(self) -> None:
        if self.prosody != SYNTHESIS_PROSODY:
            raise ValueError(f"a plan request uses {SYNTHESIS_PROSODY!r}, got {self.prosody!r}")
        DeliveryPlan.from_dict(json.loads(self.delivery))  # a valid plan, or a clear error
        RenderRequest(self.text, "neutral", self.voice, self.language)  # the text, voice and language checks

    def plan(self) -> ProsodyPlan:
        return prosody_plan(DeliveryPlan.from_dict(json.loads(self.delivery)))


@cache
def _cache(renderer: str) -> RenderCache:
    return RenderCache(make_renderer(renderer), max_bytes=CACHE_BYTES)


def render_plan(plan: DeliveryPlan, text: str, voice: str, *, renderer: str = "espeak") -> np.ndarray:
    """``text`` spoken by ``voice`` as ``plan`` says (16 kHz mono float32, deterministic)."""
    waveform = (
        _cache(renderer).render(PlanRequest(text=text, delivery=_plan_name(plan), voice=voice)).waveform
    )
    return tilt(waveform, TILT_COEFFICIENT[plan.voice_quality])


def tilt(waveform: np.ndarray, coefficient: float) -> np.ndarray:
    """First-order pre-emphasis ``y[n] = x[n] - c x[n-1]`` for ``c > 0`` (a flatter spectrum),
    its inverse de-emphasis for ``c < 0`` (a steeper one), RMS kept; 0 returns the input."""
    if coefficient == 0:
        return waveform
    c = abs(coefficient)
    b, a = ([1.0, -c], [1.0]) if coefficient > 0 else ([1.0], [1.0, -c])
    x = waveform.astype(np.float64)
    out = lfilter(b, a, x)
    gain = np.sqrt(np.mean(x**2) / max(float(np.mean(out**2)), 1e-24))
    return (out * gain).astype(np.float32)


def spectral_tilt_db(waveform: np.ndarray) -> float:
    """Level of 2-5 kHz minus level of 0.1-1 kHz (Welch power), dB: higher is flatter."""
    freqs, power = welch(waveform.astype(np.float64), fs=SAMPLE_RATE, nperseg=512)
    band = lambda lo, hi: power[(freqs >= lo) & (freqs < hi)].sum() + 1e-20  # noqa: E731
    return float(10 * np.log10(band(2000, 5000) / band(100, 1000)))


def _feature(name: str) -> Callable[[np.ndarray], float]:
    index = FEATURE_NAMES.index(name)
    return lambda waveform: float(prosodic_features(waveform)[index])


def _silence_s(waveform: np.ndarray) -> float:
    f = prosodic_features(waveform)
    return float(f[FEATURE_NAMES.index("lead_silence_s")] + f[FEATURE_NAMES.index("pause_ratio")] * f[0])


@dataclass(frozen=True)
class Cue:
    name: str
    measure: Callable[[np.ndarray], float]
    order: tuple[str, ...]  # the field's levels from the lowest to the highest value of the cue


CUES: dict[str, Cue] = {
    "rate": Cue("speech duration (s)", _feature("duration_s"), ("high", "mid", "low")),
    "pitch_level": Cue("mean F0 (st)", _feature("f0_mean_st"), ("low", "mid", "high")),
    "pitch_range": Cue("F0 range 5-95% (st)", _feature("f0_range_st"), ("low", "mid", "high")),
    "energy": Cue("mean intensity (dB)", _feature("energy_mean_db"), ("low", "mid", "high")),
    "pause": Cue("silence, lead + internal (s)", _silence_s, ("low", "mid", "high")),
    "contour": Cue("final F0 slope (st/s)", _feature("f0_final_slope_st_per_s"), ("fall", "level", "rise")),
    "voice_quality": Cue("spectral tilt (dB)", spectral_tilt_db, ("breathy", "modal", "tense")),
}
assert tuple(CUES) == PLAN_FIELDS and all(set(c.order) == set(FIELD_LEVELS[f]) for f, c in CUES.items())


@dataclass(frozen=True)
class EditOutcome:
    field: str
    before: str
    after: str
    planned: int  # +1 when the edit should raise the cue, -1 when it should lower it
    measured: float  # the cue after minus before

    @property
    def agrees(self) -> bool:
        return bool(np.sign(self.measured) == self.planned)


def one_field_edits(plan: DeliveryPlan) -> list[tuple[str, DeliveryPlan]]:
    """Every plan that differs from ``plan`` in exactly one scalar field."""
    return [
        (field, plan.replace(**{field: level}))
        for field in PLAN_FIELDS
        for level in FIELD_LEVELS[field]
        if level != plan.slot(field)
    ]


def edit_outcomes(plan: DeliveryPlan, text: str, voice: str, renderer: str = "espeak") -> list[EditOutcome]:
    """Render ``plan`` and each of its one-field edits; measure each edit's cue change."""
    base = render_plan(plan, text, voice, renderer=renderer)
    outcomes = []
    for field, edited in one_field_edits(plan):
        cue = CUES[field]
        before, after = plan.slot(field), edited.slot(field)
        planned = int(np.sign(cue.order.index(after) - cue.order.index(before)))
        moved = cue.measure(render_plan(edited, text, voice, renderer=renderer)) - cue.measure(base)
        outcomes.append(EditOutcome(field, before, after, planned, moved))
    return outcomes
