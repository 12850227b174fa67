"""Measured acoustic cues of a minimal pair's two renderings (Praat pitch and intensity).

A cue is measured on the audio, at token times the renderer reports (``render_aligned``), and
compared between the two readings of one pair, so everything the pair shares (words, voice,
length) cancels:

* pause: silence at a boundary where one reading pauses and the other does not (seconds;
  paused minus unpaused);
* stress: a token stressed in one reading and not in the other: its F0 peak (semitones; the
  accent is a raised stretch at the start of the word, which a whole-token mean dilutes over the
  rest of a long word), its voiced duration (log ratio; the renderer's span of the token, the
  voiced frames Praat finds in it) and its energy (dB), stressed minus unstressed;
* intonation: the final F0 slope over the last voiced 0.4 s (semitones/s), rise minus fall;
* tone: every syllable with a forced tone gets a shape read off its F0 contour (level high,
  rising, low, falling: Mandarin tones 1-4) by rules on the measured contour, not by comparison
  with what the renderer drew.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import theilslopes

from hear_gym.envs.ambiguity.spoken import SpokenReading

FRAME_S = 0.01
F0_FLOOR, F0_CEILING = 50.0, 500.0
SILENCE_BELOW_PEAK_DB = 30.0
# Praat's default is 0.45; a Mandarin tone 4 falls up to 60 semitones/s, which lowers the
# autocorrelation peak of a 3-period window enough that the default drops most of its frames
VOICING_THRESHOLD = 0.3
FINAL_WINDOW_S = 0.4
PEAK_PERCENTILE = 90
TONE_SHAPES = {1: "high level", 2: "rising", 3: "low", 4: "falling"}


@dataclass(frozen=True)
class Track:
    """Praat's F0 (semitones re 100 Hz, NaN unvoiced) and intensity (dB) frames of one clip."""

    f0_times: np.ndarray
    f0_st: np.ndarray
    db_times: np.ndarray
    db: np.ndarray

    @property
    def median_st(self) -> float:
        voiced = self.f0_st[~np.isnan(self.f0_st)]
        return float(np.median(voiced)) if len(voiced) else float("nan")


def track(waveform: np.ndarray, sample_rate: int = 16_000) -> Track:
    import parselmouth

    sound = parselmouth.Sound(np.asarray(waveform, dtype=np.float64), sampling_frequency=sample_rate)
    pitch = sound.to_pitch_ac(
        time_step=FRAME_S, pitch_floor=F0_FLOOR, voicing_threshold=VOICING_THRESHOLD, pitch_ceiling=F0_CEILING
    )
    hz = pitch.selected_array["frequency"]
    st = np.where(hz > 0, 12 * np.log2(np.maximum(hz, 1e-9) / 100), np.nan)
    intensity = sound.to_intensity(minimum_pitch=F0_FLOOR, time_step=FRAME_S)
    db = intensity.values[0]
    return Track(pitch.xs(), st, intensity.xs(), np.maximum(db, db.max() - 80.0))


@dataclass(frozen=True)
class TokenProsody:
    f0_mean_st: float  # NaN when fewer than 3 voiced frames
    f0_peak_st: float  # 90th percentile of the voiced frames: the top of an accent, not one stray frame
    f0_start_st: float  # mean over the first third of the voiced frames
    f0_end_st: float  # ... and the last third
    f0_min_st: float  # lowest voiced frame
    duration_s: float  # the span the renderer reports
    voiced_s: float  # voiced frames inside it (measured)
    energy_db: float


def token_prosody(t: Track, span: tuple[float, float]) -> TokenProsody:
    a, b = span
    inside = (t.f0_times >= a) & (t.f0_times < b)
    voiced = t.f0_st[inside & ~np.isnan(t.f0_st)]
    voiced_s = len(voiced) * FRAME_S
    # the contour's core: an eighth off each end, where the pitch track still carries the
    # neighbouring syllable (transitions, an early or late span edge)
    trim = len(voiced) // 8
    voiced = voiced[trim : len(voiced) - trim]
    if len(voiced) >= 3:
        third = max(1, len(voiced) // 3)
        mean, start, end = voiced.mean(), voiced[:third].mean(), voiced[-third:].mean()
        low, peak = voiced.min(), np.percentile(voiced, PEAK_PERCENTILE)
    else:
        mean = start = end = low = peak = float("nan")
    loud = t.db[(t.db_times >= a) & (t.db_times < b)]
    energy = float(10 * np.log10(np.mean(10 ** (loud / 10)))) if len(loud) else float("nan")
    return TokenProsody(
        float(mean), float(peak), float(start), float(end), float(low), b - a, voiced_s, energy
    )


def silence_between(t: Track, left: tuple[float, float], right: tuple[float, float]) -> float:
    """The longest silent stretch (intensity below peak - 30 dB) between the middle of the left
    token and the middle of the right one, in seconds."""
    a, b = (left[0] + left[1]) / 2, (right[0] + right[1]) / 2
    window = (t.db_times >= a) & (t.db_times < b)
    quiet = (t.db < t.db.max() - SILENCE_BELOW_PEAK_DB)[window]
    longest = run = 0
    for q in quiet:
        run = run + 1 if q else 0
        longest = max(longest, run)
    return longest * FRAME_S


def final_slope(t: Track) -> float:
    """F0 trend over the last voiced 0.4 s (median of pairwise slopes), semitones per second."""
    voiced = ~np.isnan(t.f0_st)
    times, st = t.f0_times[voiced], t.f0_st[voiced]
    if len(times) < 3:
        return 0.0
    final = times >= times[-1] - FINAL_WINDOW_S
    if final.sum() < 3:
        return 0.0
    # Theil-Sen: a few stray frames (a release burst taken as voiced) do not turn the trend
    return float(theilslopes(st[final], times[final])[0])


def tone_shape(token: TokenProsody, context_median_st: float) -> int | None:
    """The Mandarin tone a syllable's measured contour shows, by its shape (semitones; the
    register reference is the median F0 of the rest of the utterance): falling by 3 or more ->
    4; low (mean at least 1 below the reference) or dipping (lowest frame at least 1 below both
    ends) -> 3; rising by 2 or more -> 2; falling by 2 or more -> 4; level within 2 -> 1 (high
    level: it is not low); None when it is too little voiced."""
    if np.isnan(token.f0_mean_st):
        return None
    movement = token.f0_end_st - token.f0_start_st
    dips = token.f0_min_st <= min(token.f0_start_st, token.f0_end_st) - 1.0
    if movement <= -3.0:
        return 4
    if token.f0_mean_st <= context_median_st - 1.0 or dips:
        return 3
    if movement >= 2.0:
        return 2
    return 4 if movement <= -2.0 else 1


def context_median_st(t: Track, span: tuple[float, float]) -> float:
    """Median F0 of the voiced frames outside ``span``: the speaker's register around a syllable."""
    outside = ((t.f0_times < span[0]) | (t.f0_times >= span[1])) & ~np.isnan(t.f0_st)
    return float(np.median(t.f0_st[outside])) if outside.any() else t.median_st


# -- pair cues ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CueValue:
    contrast: str
    cue: str
    value: float  # signed so that positive is the expected direction


def pair_cues(
    readings: tuple[SpokenReading, SpokenReading],
    tracks: tuple[Track, Track],
    spans: tuple[tuple[tuple[float, float], ...], tuple[tuple[float, float], ...]],
) -> list[CueValue]:
    """Every contrast the two readings differ in, as signed cue values (module docstring)."""
    cues: list[CueValue] = []
    for side in (0, 1):
        mine, other = readings[side], readings[1 - side]
        for i in sorted(set(mine.pause_after) - set(other.pause_after)):
            gap = [silence_between(tracks[s], spans[s][i], spans[s][i + 1]) for s in (0, 1)]
            cues.append(CueValue("pause", "silence_s", gap[side] - gap[1 - side]))
        for i in sorted(set(mine.stress) - set(other.stress)):
            me, them = (token_prosody(tracks[s], spans[s][i]) for s in (side, 1 - side))
            cues += [
                CueValue("stress", "f0_peak_st", me.f0_peak_st - them.f0_peak_st),
                CueValue("stress", "log_voiced_duration_ratio", float(np.log(me.voiced_s / them.voiced_s))),
                CueValue("stress", "energy_db", me.energy_db - them.energy_db),
            ]
        if mine.contour == "rise" and other.contour == "fall":
            slopes = [final_slope(tracks[s]) for s in (side, 1 - side)]
            cues.append(CueValue("intonation", "final_slope_st_per_s", slopes[0] - slopes[1]))
    return cues


def tone_matches(
    reading: SpokenReading, t: Track, spans: tuple[tuple[float, float], ...]
) -> list[tuple[int, int | None]]:
    """(forced tone, measured shape) for each Mandarin syllable whose tone the reading forces
    (neutral tone 5 has no shape and is skipped)."""
    if reading.language != "zh":
        return []
    out = []
    for i, form in reading.pronounce:
        tone = int(form[-1])
        if tone in TONE_SHAPES:
            out.append((tone, tone_shape(token_prosody(t, spans[i]), context_median_st(t, spans[i]))))
    return out


@dataclass(frozen=True)
class PairMeasurement:
    cues: tuple[CueValue, ...]
    tones: tuple[tuple[int, int | None], ...]  # (forced tone, measured shape), both readings


def measure_pair(readings: tuple[SpokenReading, SpokenReading], voice: str, renderer: str) -> PairMeasurement:
    """Renders both readings (uncached, with token times) and measures their cues."""
    from hear_gym.envs.ambiguity.render import render_aligned

    rendered = [render_aligned(reading, voice, renderer) for reading in readings]
    tracks = tuple(track(waveform) for waveform, _ in rendered)
    spans = tuple(s for _, s in rendered)
    tones = [
        m for reading, t, s in zip(readings, tracks, spans, strict=True) for m in tone_matches(reading, t, s)
    ]
    return PairMeasurement(tuple(pair_cues(readings, tracks, spans)), tuple(tones))
