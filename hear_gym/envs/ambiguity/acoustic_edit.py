"""Praat (parselmouth) edits of one utterance: F0 drawn per time span, durations scaled per span.

``render.py`` decides *what* to draw (a stressed word's pitch accent, a Mandarin tone, the final
rise or fall) as functions of time; this module applies them to eSpeak's speech by overlap-add
resynthesis and reports where every original time landed, so that later steps (inserted pauses,
gain on the stressed word) find the words again.

F0 edits are written in semitones re 100 Hz: an ``F0Edit`` maps (times, the original contour in
semitones) to the new contour over its span. Durations are piecewise constant: one factor per span
(outside every span: ``base_factor``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

F0_FLOOR, F0_CEILING = 50.0, 500.0
_STEP_S = 0.001  # a duration step is drawn as two points this far apart (Praat interpolates linearly)

Contour = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class F0Edit:
    start: float  # seconds
    end: float
    contour: Contour  # (times, original semitones) -> new semitones, for the points in [start, end)


@dataclass(frozen=True)
class DurationSpan:
    start: float
    end: float
    factor: float


def semitones(hz: np.ndarray) -> np.ndarray:
    return 12 * np.log2(np.asarray(hz, dtype=np.float64) / 100)


def hertz(st: np.ndarray) -> np.ndarray:
    return 100 * 2 ** (np.asarray(st, dtype=np.float64) / 12)


def median_f0_st(samples: np.ndarray, rate: int) -> float:
    """The utterance's median F0 in semitones re 100 Hz (0 when nothing is voiced)."""
    import parselmouth

    pitch = parselmouth.Sound(samples, sampling_frequency=rate).to_pitch(0.01, F0_FLOOR, F0_CEILING)
    f0 = pitch.selected_array["frequency"]
    voiced = f0[f0 > 0]
    return float(np.median(semitones(voiced))) if len(voiced) else 0.0


def resynthesize(
    samples: np.ndarray,
    rate: int,
    f0_edits: list[F0Edit],
    durations: list[DurationSpan],
    base_factor: float = 1.0,
) -> np.ndarray:
    """Overlap-add resynthesis with the edits applied (float64 samples at ``rate``). The caller
    seeds Praat's random generator: overlap-add draws from it."""
    import parselmouth
    from parselmouth.praat import call

    sound = parselmouth.Sound(samples, sampling_frequency=rate)
    manipulation = call(sound, "To Manipulation", 0.01, F0_FLOOR, F0_CEILING)
    if f0_edits:
        tier = call(manipulation, "Extract pitch tier")
        n = call(tier, "Get number of points")
        times = np.array([call(tier, "Get time from index", i) for i in range(1, n + 1)])
        values = semitones([call(tier, "Get value at index", i) for i in range(1, n + 1)])
        for edit in f0_edits:
            inside = (times >= edit.start) & (times < edit.end)
            if inside.any():
                values[inside] = edit.contour(times[inside], values[inside])
        new_tier = call("Create PitchTier", "edited", sound.xmin, sound.xmax)
        for t, hz in zip(times, hertz(values), strict=True):
            call(new_tier, "Add point", float(t), float(hz))
        call([manipulation, new_tier], "Replace pitch tier")
    tier = call("Create DurationTier", "durations", sound.xmin, sound.xmax)
    for t, factor in _duration_points(durations, base_factor, sound.xmax):
        call(tier, "Add point", t, factor)
    call([manipulation, tier], "Replace duration tier")
    return call(manipulation, "Get resynthesis (overlap-add)").values[0].astype(np.float64)


def _duration_points(spans: list[DurationSpan], base: float, end: float) -> list[tuple[float, float]]:
    """Points drawing the piecewise-constant factors: each stretch's factor holds from half a
    step after its start to half a step before its end (Praat interpolates in between)."""
    stretches, cursor = [], 0.0
    for span in sorted(spans, key=lambda s: s.start):
        if span.start > cursor:
            stretches.append((cursor, span.start, base))
        stretches.append((max(span.start, cursor), span.end, span.factor))
        cursor = max(cursor, span.end)
    stretches.append((cursor, max(end, cursor), base))
    half = _STEP_S / 2
    points = []
    for a, b, factor in stretches:
        if b - a > _STEP_S:
            points += [(a + half, factor), (b - half, factor)]
        elif b > a:
            points.append(((a + b) / 2, factor))
    return points


def time_map(spans: list[DurationSpan], base_factor: float) -> Callable[[float], float]:
    """Where an original time lands after the duration edits (piecewise constant factors; the
    1 ms ramps Praat draws between steps are ignored: under a millisecond of error)."""
    ordered = sorted(spans, key=lambda s: s.start)

    def mapped(t: float) -> float:
        out, cursor = 0.0, 0.0
        for span in ordered:
            if t <= span.start:
                break
            out += (span.start - cursor) * base_factor
            stop = min(t, span.end)
            out += (stop - span.start) * span.factor
            cursor = stop
        return out + max(0.0, t - cursor) * base_factor

    return mapped
