"""Scalars of the last ``TAIL_S`` of a prefix: the onset-timing shortcut controls.

A prefix that ends just after the divergence ends in branch-specific samples; one that ends
before it ends in the shared prefix. If the shared prefix sounds different from either branch (a
two-voice mixture is less harmonic than one voice), a scalar of the prefix's tail times the
onset without any action evidence. ``tail_scalars`` measures, over the last ``TAIL_S``:
harmonicity (Praat, cross-correlation method, mean over sounding frames), spectral flatness
(geometric over arithmetic mean power, mean over 25 ms frames), RMS level, and F0 statistics
(Praat pitch with the project's floor and ceiling, in semitones re 100 Hz: mean, standard
deviation, slope, voiced share). ``timing_predictions`` is a timing control: the shared
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
)
ACT = "act"  # the timing controls' one non-Wait label
_FLATNESS_FRAME = 400  # 25 ms at 16 kHz
_HARMONICITY_FLOOR_HZ = 75.0  # Praat's default; a 300 ms tail holds many of its windows


def tail_scalars(waveform: np.ndarray, sample_rate: int = AUDIO_RATE) -> np.ndarray:
    """``TAIL_SCALAR_NAMES`` of the last ``TAIL_S`` of ``waveform`` (float32; 0 where undefined)."""
    import parselmouth
    from parselmouth.praat import call

    tail = np.asarray(waveform[-int(round(TAIL_S * sample_rate)) :], dtype=np.float64)
    sound = parselmouth.Sound(tail, sampling_frequency=sample_rate)
    harmonicity = call(
        sound.to_harmonicity_cc(time_step=FRAME_S, minimum_pitch=_HARMONICITY_FLOOR_HZ), "Get mean", 0, 0
    )
    frames = tail[: len(tail) // _FLATNESS_FRAME * _FLATNESS_FRAME].reshape(-1, _FLATNESS_FRAME)
    power = np.abs(np.fft.rfft(frames * np.hanning(_FLATNESS_FRAME), axis=1)) ** 2 + 1e-12
    flatness = float(np.mean(np.exp(np.mean(np.log(power), axis=1)) / np.mean(power, axis=1)))
    rms_db = 10 * np.log10(np.mean(tail**2) + 1e-12)
    pitch = sound.to_pitch(time_step=FRAME_S, pitch_floor=PITCH_FLOOR_HZ, pitch_ceiling=PITCH_CEILING_HZ)
    f0, t = pitch.selected_array["frequency"], pitch.xs()
    voiced = f0 > 0
    f0_stats = [0.0, 0.0, 0.0]
    if voiced.sum() >= 3:
        st = 12 * np.log2(f0[voiced] / 100.0)
        f0_stats = [float(st.mean()), float(st.std()), float(np.polyfit(t[voiced], st, 1)[0])]
    values = [harmonicity, flatness, rms_db, *f0_stats, float(voiced.mean()) if len(voiced) else 0.0]
    return np.nan_to_num(np.asarray(values, dtype=np.float64)).astype(np.float32)


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
