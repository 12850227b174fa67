"""The 22,050 -> 16,000 Hz resampler: exact for int16 PCM, whatever the layout, chunking or threads."""

from __future__ import annotations

import numpy as np
import pytest
import threadpoolctl

from hear_gym.speech import resample
from hear_gym.speech.resample import (
    COEFFICIENT_BITS,
    DOWN,
    HALF,
    UP,
    lowpass,
    output_length,
    resample_pcm16,
    resample_to_16k,
)


def pcm(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-32768, 32768, n).astype(np.int16)


def exact_reference(x: np.ndarray) -> np.ndarray:
    """The polyphase sum in int64, one output at a time: sum_s h[441 n + HALF - 320 s] x[s]."""
    h = np.round(lowpass() * UP * 2.0**COEFFICIENT_BITS).astype(np.int64)
    samples = x.astype(np.int64)
    out = np.empty(output_length(len(x)), dtype=np.int64)
    for n in range(len(out)):
        centre = DOWN * n + HALF
        s = np.arange(max(0, -(-(centre - len(h) + 1) // UP)), min(len(x) - 1, centre // UP) + 1)
        out[n] = (h[centre - UP * s] * samples[s]).sum()
    return out.astype(np.float64) * 2.0**-COEFFICIENT_BITS


def test_pcm16_resampling_is_the_exact_sum():
    x = pcm(3_000)
    assert np.array_equal(resample_pcm16(x), exact_reference(x))
    assert np.array_equal(resample_pcm16(x[:7]), exact_reference(x[:7]))  # shorter than the filter


def test_it_agrees_with_the_float_path_to_far_below_float32_resolution():
    x = pcm(50_000, seed=1)
    exact, poly = resample_pcm16(x), resample_to_16k(x.astype(np.float64))
    assert len(exact) == len(poly) == output_length(len(x))
    assert np.abs(exact - poly).max() < 1e-9 * 32768


def test_bits_do_not_depend_on_layout_position_chunking_or_threads(monkeypatch):
    x = pcm(40_000, seed=2)
    reference = resample_pcm16(x)
    # another position in memory (unaligned), and the same samples later in a longer input: a
    # shift by 441 input samples is a shift by 320 outputs
    unaligned = np.zeros(len(x) + 1, dtype=np.int16)[1:]
    unaligned[:] = x
    assert np.array_equal(resample_pcm16(unaligned), reference)
    later = resample_pcm16(np.concatenate([np.zeros(3 * DOWN, dtype=np.int16), x]))
    assert np.array_equal(later[3 * UP : 3 * UP + len(reference)], reference)
    monkeypatch.setattr(resample, "MAX_PRODUCT_MACS", 1)  # one period per product
    assert np.array_equal(resample_pcm16(x), reference)
    # one product for the whole input, large enough for OpenBLAS to split it over two threads
    longer = pcm(300_000, seed=3)
    with threadpoolctl.threadpool_limits(1):
        single = resample_pcm16(longer)
    monkeypatch.setattr(resample, "MAX_PRODUCT_MACS", 2**40)
    with threadpoolctl.threadpool_limits(2):
        assert np.array_equal(resample_pcm16(longer), single)


def test_level_and_duration_are_kept():
    tone = np.round(8000 * np.sin(2 * np.pi * 440 * np.arange(22_050) / 22_050)).astype(np.int16)
    out = resample_pcm16(tone)
    assert len(out) == 16_000 and abs(out[2000:-2000].std() / tone.std() - 1) < 0.01


def test_only_int16_takes_the_exact_path():
    with pytest.raises(TypeError, match="int16"):
        resample_pcm16(np.zeros(100, dtype=np.int32))
