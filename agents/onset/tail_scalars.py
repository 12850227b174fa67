"""Scalars of the last ``TAIL_S`` of a prefix: the onset-timing shortcut controls.

A prefix that ends just after the divergence ends in branch-specific samples; one that ends
before it ends in the shared prefix. If the shared prefix sounds different from either branch (a
two-voice mixture is less harmonic than one voice), a scalar of the prefix's tail times the
onset without any action evidence. ``tail_scalars`` measures, over the last ``TAIL_S``:
harmonicity (Praat, cross-correlation method, mean over sounding frames), spectral flatness
(geometric over arithmetic mean power, mean over 25 ms frames), RMS level, and F0 statistics
(Praat pitch with the project's floor and ceiling, in semitones re 100 Hz: mean, standard
deviation, slope, voiced share, and the jump from the ``TAIL_S`` before). ``timing_predictions`` is a timing control: the shared
classifier fit on Wait vs act (any action) from a few columns, so its first act is its onset.
"""

from __future__ import annotations

import numpy as np

from agents.onset.logistic import BalancedLogisticRegression
from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.envs.onset.actions import WAIT
from hear_gym.speech.features import FRAME_S, PITCH_CEILING_HZ, PITCH_FLOOR_HZ

TAIL_S = 0.3
TAIL_SCALAR_NAMES: tuple[str, ...] = (
    "tail_harmonicity_db",
    "tail_spectral_flatness",
    "tail_rms_db",
    "tail_f0_mean_st",
    "tail_f0_std_st",
    "tail_f0_slope_st_per_s",
    "tail_voiced_fraction",
    "tail_f0_jump_st",  # mean F0 of the tail minus that of the TAIL_S before it (a pitch reset)
)
ACT = "act"  # the timing controls' one non-Wait label
_FLATNESS_FRAME = 400  # 25 ms at 16 kHz
_HARMONICITY_FLOOR_HZ = 75.0  # Praat's default; a 300 ms tail holds many of its windows


def tail_scalars(waveform: np.ndarray, sample_rate: int = AUDIO_RATE) -> np.ndarray:
    """``TAIL_SCALAR_NAMES`` of the last ``TAIL_S`` of ``waveform`` (float32; 0 where undefined)."""
    import parselmouth
    from parselmouth.praat import call

    tail = np.asarray(waveform[-int(round(TAIL_S * sample_rate)) :], dtype=np.float64)
    if len(tail) < int(round(TAIL_S * sample_rate)):  # prefixes are longer; nothing to measure
        return np.zeros(len(TAIL_SCALAR_NAMES), dtype=np.float32)
    sound = parselmouth.Sound(tail, sampling_frequency=sample_rate)
    harmonicity = call(
        sound.to_harmonicity_cc(time_step=FRAME_S, minimum_pitch=_HARMONICITY_FLOOR_HZ), "Get mean", 0, 0
    )
    frames = tail[: len(tail) // _FLATNESS_FRAME * _FLATNESS_FRAME].reshape(-1, _FLATNESS_FRAME)
    power = np.abs(np.fft.rfft(frames * np.hanning(_FLATNESS_FRAME), axis=1)) ** 2 + 1e-12
    flatness = float(np.mean(np.exp(np.mean(np.log(power), axis=1)) / np.mean(power, axis=1)))
    rms_db = 10 * np.log10(np.mean(tail**2) + 1e-12)
    st, t = _f0_st(tail, sample_rate)
    f0_stats = (
        [float(st.mean()), float(st.std()), float(np.polyfit(t, st, 1)[0])] if len(st) >= 3 else [0.0] * 3
    )
    voiced_fraction = len(st) / max(1, int(TAIL_S / FRAME_S))
    before, _ = _f0_st(np.asarray(waveform[-2 * len(tail) : -len(tail)], dtype=np.float64), sample_rate)
    jump = float(st.mean() - before.mean()) if len(st) >= 3 and len(before) >= 3 else 0.0
    values = [harmonicity, flatness, rms_db, *f0_stats, voiced_fraction, jump]
    return np.nan_to_num(np.asarray(values, dtype=np.float64)).astype(np.float32)


def _f0_st(segment: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """F0 (semitones re 100 Hz) of the voiced frames of ``segment`` and their times."""
    import parselmouth

    if len(segment) < int(3 / PITCH_FLOOR_HZ * sample_rate):  # Praat needs 3 periods of the floor
        return np.zeros(0), np.zeros(0)
    sound = parselmouth.Sound(segment, sampling_frequency=sample_rate)
    pitch = sound.to_pitch(time_step=FRAME_S, pitch_floor=PITCH_FLOOR_HZ, pitch_ceiling=PITCH_CEILING_HZ)
    f0, t = pitch.selected_array["frequency"], pitch.xs()
    voiced = f0 > 0
    return 12 * np.log2(f0[voiced] / 100.0), t[voiced]


def fit_timing(
    features: np.ndarray, targets: list[str]
) -> tuple[BalancedLogisticRegression, np.ndarray, np.ndarray]:
    """A Wait-vs-act probe (the shared classifier, standardized inputs) and its standardization."""
    mean, std = features.mean(axis=0), features.std(axis=0)
    scale = np.where(std > 0, std, 1.0)
    labels = [WAIT if t == WAIT else ACT for t in targets]
    return BalancedLogisticRegression().fit((features - mean) / scale, labels), mean, scale


def timing_predictions(features_train, targets_train, features_test) -> list[str]:
    model, mean, scale = fit_timing(np.asarray(features_train, np.float64), targets_train)
    return model.predict((np.asarray(features_test, np.float64) - mean) / scale)
