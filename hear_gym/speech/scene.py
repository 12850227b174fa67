"""Acoustic scenes: small pure functions on float32 mono waveforms.

Level, fades, gaps, concatenation of segments from different voices, far-field rendering with
image-source room impulse responses (pyroomacoustics; one RIR per room configuration, cached),
additive noise at a target SNR, and a stationary pink noise bed (room tone). Each function
returns a new array and never mutates its input; randomness (noise) comes from a
``numpy.random.Generator`` the caller passes in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.signal import butter, fftconvolve, lfilter, sosfilt

SAMPLE_RATE = 16_000
_EPS = 1e-12


def rms_dbfs(x: np.ndarray) -> float:
    """RMS level in dB relative to full scale (an RMS of 1.0)."""
    return float(10 * np.log10(np.mean(np.square(x, dtype=np.float64)) + _EPS))


def normalize_loudness(x: np.ndarray, target_dbfs: float = -20.0) -> np.ndarray:
    """Scale to an RMS level of ``target_dbfs``; silence stays silence."""
    if not np.any(x):
        return np.array(x, dtype=np.float32)
    gain = 10 ** ((target_dbfs - rms_dbfs(x)) / 20)
    return (np.asarray(x, dtype=np.float64) * gain).astype(np.float32)


def peak_dbfs(x: np.ndarray) -> float:
    return float(20 * np.log10(np.max(np.abs(x)) + _EPS))


def fade(x: np.ndarray, ms: float = 5.0, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Raised-cosine fade-in and fade-out of ``ms`` each (shortened for very short clips)."""
    n = min(int(round(sample_rate * ms / 1000)), len(x) // 2)
    out = np.array(x, dtype=np.float32)
    if n > 0:
        ramp = (0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32)
        out[:n] *= ramp
        out[-n:] *= ramp[::-1]
    return out


def gap(ms: float, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    return np.zeros(int(round(sample_rate * ms / 1000)), dtype=np.float32)


def concatenate(
    segments: list[np.ndarray], gaps_ms: list[float] | None = None, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """Segments in order with ``gaps_ms[i]`` of silence after segment i (one per boundary)."""
    gaps_ms = gaps_ms if gaps_ms is not None else [0.0] * (len(segments) - 1)
    if len(gaps_ms) != max(len(segments) - 1, 0):
        raise ValueError(f"{len(segments)} segments need {len(segments) - 1} gaps, got {len(gaps_ms)}")
    parts: list[np.ndarray] = []
    for i, segment in enumerate(segments):
        parts.append(np.asarray(segment, dtype=np.float32))
        if i < len(gaps_ms):
            parts.append(gap(gaps_ms[i], sample_rate))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def add_noise(
    x: np.ndarray, snr_db: float, rng: np.random.Generator, noise: np.ndarray | None = None
) -> np.ndarray:
    """Add noise (white Gaussian unless given) scaled so that signal/noise power = ``snr_db``."""
    if noise is None:
        noise = rng.standard_normal(len(x))
    elif len(noise) < len(x):
        raise ValueError("noise is shorter than the signal")
    noise = np.asarray(noise[: len(x)], dtype=np.float64)
    scale = np.sqrt(np.mean(np.square(x, dtype=np.float64)) / (np.mean(noise**2) * 10 ** (snr_db / 10)))
    return (np.asarray(x, dtype=np.float64) + scale * noise).astype(np.float32)


# 1/f ("pink") spectrum within 0.3 dB from 10 Hz to Nyquist: the published 3-pole/3-zero design
# from J. O. Smith, "Spectral Audio Signal Processing" (example: pink noise generation).
_PINK_B = (0.049922035, -0.095993537, 0.050612699, -0.004408786)
_PINK_A = (1.0, -2.494956002, 2.017265875, -0.522189400)


@lru_cache(maxsize=8)
def _pink_chain(sample_rate: int, highpass_hz: float) -> tuple[np.ndarray, float]:
    """(high-pass SOS, RMS of the pink + high-pass chain's output for unit white input)."""
    sos = butter(2, highpass_hz, btype="highpass", fs=sample_rate, output="sos")
    impulse = np.zeros(1 << 17)
    impulse[0] = 1.0
    response = sosfilt(sos, lfilter(_PINK_B, _PINK_A, impulse))
    return sos, float(np.sqrt(np.sum(response**2)))


def pink_noise(
    n: int,
    rng: np.random.Generator,
    level_dbfs: float = -50.0,
    highpass_hz: float = 50.0,
    sample_rate: int = SAMPLE_RATE,
) -> np.ndarray:
    """Stationary pink noise (1/f, high-passed to drop rumble) with an expected RMS of
    ``level_dbfs``. Both filters are causal and the gain is the chain's analytic one (not the
    draw's RMS), so the first k samples never depend on ``n``: a longer bed continues a shorter
    one. The filters start from rest after a warm-up that is drawn and discarded."""
    warmup = sample_rate // 2  # several time constants of the slowest pole (|p| = 0.9986)
    sos, gain = _pink_chain(sample_rate, highpass_hz)
    white = rng.standard_normal(warmup + n)
    shaped = sosfilt(sos, lfilter(_PINK_B, _PINK_A, white))[warmup:]
    return (shaped * (10 ** (level_dbfs / 20) / gain)).astype(np.float32)


@dataclass(frozen=True)
class RoomConfig:
    """A shoebox room with one source and one microphone (metres, seconds)."""

    dimensions: tuple[float, float, float] = (5.0, 4.0, 3.0)
    rt60_s: float = 0.5
    source: tuple[float, float, float] = (1.0, 2.0, 1.5)
    microphone: tuple[float, float, float] = (4.0, 2.0, 1.2)
    max_order: int | None = None  # None: as many reflections as the RT60 needs (Sabine)
    sample_rate: int = SAMPLE_RATE

    @property
    def distance_m(self) -> float:
        return float(np.linalg.norm(np.subtract(self.source, self.microphone)))


@lru_cache(maxsize=64)
def room_impulse_response(config: RoomConfig) -> np.ndarray:
    """Image-source RIR of ``config`` (computed once per configuration, read-only)."""
    import pyroomacoustics as pra

    absorption, max_order = pra.inverse_sabine(config.rt60_s, list(config.dimensions))
    room = pra.ShoeBox(
        list(config.dimensions),
        fs=config.sample_rate,
        materials=pra.Material(absorption),
        max_order=max_order if config.max_order is None else config.max_order,
    )
    room.add_source(list(config.source))
    room.add_microphone(np.array(config.microphone)[:, None])
    room.compute_rir()
    rir = np.asarray(room.rir[0][0], dtype=np.float32)
    rir.flags.writeable = False
    return rir


def reverberate(x: np.ndarray, config: RoomConfig) -> np.ndarray:
    """Far-field rendering: the dry signal convolved with the room's RIR (length grows by the
    reverberant tail, len(rir) - 1 samples)."""
    return fftconvolve(np.asarray(x, dtype=np.float64), room_impulse_response(config)).astype(np.float32)


def direct_to_reverberant_db(
    rir: np.ndarray, sample_rate: int = SAMPLE_RATE, window_ms: float = 1.0
) -> float:
    """Energy within ``window_ms`` of the direct-path peak over the energy after it."""
    peak = int(np.argmax(np.abs(rir)))
    w = int(round(sample_rate * window_ms / 1000))
    direct = np.sum(np.square(rir[max(peak - w, 0) : peak + w + 1], dtype=np.float64))
    late = np.sum(np.square(rir[peak + w + 1 :], dtype=np.float64))
    return float(10 * np.log10((direct + _EPS) / (late + _EPS)))


def decay_time_s(rir: np.ndarray, sample_rate: int = SAMPLE_RATE) -> float:
    """RT60 estimated from the Schroeder backward integral (T20 fit, -5 to -25 dB, x3)."""
    energy = np.cumsum(np.square(rir[::-1], dtype=np.float64))[::-1]
    edc = 10 * np.log10(energy / energy[0] + _EPS)
    start, stop = np.argmax(edc <= -5), np.argmax(edc <= -25)
    if stop <= start:
        return 0.0
    t = np.arange(start, stop) / sample_rate
    slope = np.polyfit(t, edc[start:stop], 1)[0]
    return float(-60.0 / slope)
