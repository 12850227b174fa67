"""Speaker and room *change* features of a recording: what changed across its longest pause.

Used by the VoiceGate audio gate and by VoiceGate's feature observation. Nothing here reads item
metadata: the two utterances are found from the audio alone. The input is cut at its
longest internal pause (energy below the clip's peak by ``SILENCE_BELOW_PEAK_DB``), giving a
``head`` and a ``tail`` segment. When the speaker left no pause (the 0 ms cue-validity
conditions) the longest pause may fall inside an utterance; the gate then compares mixed
segments, which is one of the things the cue-validity set measures.

Per segment (``SEGMENT_FEATURES``): 13 MFCC means (timbre, and the spectral colouring of a room),
F0 level and spread from Praat (speaker), spectral centroid, roll-off and the share of energy
above 2 kHz (distance and head orientation dull the spectrum), and the spread of frame energy
(reverberation fills the dips between syllables). The gate's vector is the tail's features
minus the head's (speaker and room *change*), the tail's own features, and the pause length.
"""

from __future__ import annotations

import functools

import librosa
import numpy as np

from hear_gym.speech.features import FEATURE_NAMES, prosodic_features

SAMPLE_RATE = 16_000
FRAME = 160  # 10 ms
SILENCE_BELOW_PEAK_DB = 35.0
MIN_SEGMENT_S = 0.25
N_MFCC = 13
SEGMENT_FEATURES = (
    *(f"mfcc{i}" for i in range(N_MFCC)),
    "f0_mean_st",
    "f0_std_st",
    "centroid_khz",
    "rolloff_khz",
    "high_band_ratio",
    "energy_spread_db",
)
GATE_FEATURES = (
    *(f"delta_{n}" for n in SEGMENT_FEATURES),
    *(f"tail_{n}" for n in SEGMENT_FEATURES),
    "pause_s",
)
_F0 = [FEATURE_NAMES.index("f0_mean_st"), FEATURE_NAMES.index("f0_std_st")]


def frame_db(wave: np.ndarray) -> np.ndarray:
    n = len(wave) // FRAME
    frames = wave[: n * FRAME].reshape(n, FRAME).astype(np.float64)
    return 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)


def split_at_longest_pause(wave: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(head, tail, pause seconds). Without an internal pause the cut is the speech midpoint."""
    db = frame_db(wave)
    if len(db) == 0:
        raise ValueError("empty audio")
    speech = db > db.max() - SILENCE_BELOW_PEAK_DB
    first, last = int(np.argmax(speech)), len(speech) - 1 - int(np.argmax(speech[::-1]))
    best, best_start, run_start = 0, None, None
    min_frames = int(MIN_SEGMENT_S * SAMPLE_RATE / FRAME)
    for i in range(first, last + 1):
        if not speech[i] and run_start is None:
            run_start = i
        elif speech[i] and run_start is not None:
            if i - run_start > best and run_start - first >= min_frames and last - i >= min_frames:
                best, best_start = i - run_start, run_start
            run_start = None
    if best_start is None:
        cut = (first + last + 1) // 2
        return wave[first * FRAME : cut * FRAME], wave[cut * FRAME : (last + 1) * FRAME], 0.0
    return (
        wave[first * FRAME : best_start * FRAME],
        wave[(best_start + best) * FRAME : (last + 1) * FRAME],
        best * FRAME / SAMPLE_RATE,
    )


@functools.cache
def _mel_basis() -> np.ndarray:
    return librosa.filters.mel(sr=SAMPLE_RATE, n_fft=512)


def segment_features(segment: np.ndarray) -> np.ndarray:
    x = np.asarray(segment, dtype=np.float32)
    power = np.abs(librosa.stft(x, n_fft=512, hop_length=FRAME)) ** 2
    # librosa.feature.mfcc(y=...) computes this same mel spectrogram through np.einsum, which
    # is over ten times slower here than the matrix product (the result is bit-identical)
    mfcc = librosa.feature.mfcc(S=librosa.power_to_db(_mel_basis() @ power), n_mfcc=N_MFCC)
    freqs = librosa.fft_frequencies(sr=SAMPLE_RATE, n_fft=512)
    spectrum = power.sum(axis=1)
    centroid = float((freqs * spectrum).sum() / (spectrum.sum() + 1e-12))
    cumulative = np.cumsum(spectrum) / (spectrum.sum() + 1e-12)
    rolloff = float(freqs[min(int(np.searchsorted(cumulative, 0.85)), len(freqs) - 1)])
    high = float(spectrum[freqs >= 2000].sum() / (spectrum.sum() + 1e-12))
    db = frame_db(x)
    loud = db[db > db.max() - SILENCE_BELOW_PEAK_DB] if len(db) else np.zeros(1)
    spread = float(np.percentile(loud, 90) - np.percentile(loud, 10))
    f0 = np.nan_to_num(prosodic_features(x, SAMPLE_RATE)[_F0])
    return np.concatenate([mfcc.mean(axis=1), f0, [centroid / 1000, rolloff / 1000, high, spread]]).astype(
        np.float32
    )


def gate_features(wave: np.ndarray) -> np.ndarray:
    """The ``GATE_FEATURES`` vector of one input's audio."""
    head, tail, pause = split_at_longest_pause(np.asarray(wave, dtype=np.float32))
    h, t = segment_features(head), segment_features(tail)
    return np.concatenate([t - h, t, [pause]]).astype(np.float32)
