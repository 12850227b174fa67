"""22,050 -> 16,000 Hz: eSpeak's output rate to the envs' audio rate, bit-identical wherever it runs.

One low-pass for both entry points: the filter scipy's ``resample_poly`` designs for 320/441
(Kaiser-windowed sinc, beta 5, cutoff at the output's Nyquist frequency, ten zero crossings on
each side: about 28 taps per output sample), designed once.

* ``resample_pcm16``: integer PCM (eSpeak's int16 samples), computed exactly. The coefficients
  are rounded to integers at a scale of ``2**COEFFICIENT_BITS`` (relative change below 1e-11,
  far under float32's resolution). Every product of an int16 sample with such a coefficient,
  and every partial sum of an output sample, is then an integer below ``2**53``, which float64
  holds exactly: the result does not depend on the order of the additions, so the polyphase sum
  can run as block matrix products (BLAS, about 2-3x faster than scipy's per-sample loop) and
  still give the same bits on every call, in every process, with any thread count, SIMD width or
  BLAS build. (soxr, an earlier choice, was faster still but changed its output with memory
  layout; a float64 BLAS product of non-integers can too.)
* ``resample_to_16k``: float input (Praat's resynthesis, mixtures) through ``resample_poly``
  with the same filter: its per-sample loop sums in one fixed order, hence deterministic, but
  slower. The two agree to about 1e-10 of full scale.

Layout of the exact product: output sample ``n = 320 m + q`` (``m`` a period of 320 outputs,
``q`` its phase) is ``sum_r h[441 q + HALF - 320 r] x[441 m + r]``, the filter centred as
``resample_poly`` centres it. For a range of phases the taps ``r`` span a short window, so rows
``m`` of a strided view of the (zero-padded) input times one small coefficient matrix give those
phases' outputs for every period.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

UP, DOWN = 320, 441  # 16,000 / 22,050 in lowest terms
HALF = 10 * DOWN  # half the filter length, in taps at the upsampled rate (resample_poly's choice)
COEFFICIENT_BITS = 36
PHASES_PER_PRODUCT = 32  # output phases per coefficient matrix (each spans about 72 input taps)
# OpenBLAS splits a product over its thread pool above M*N*K = 2**18 (65536 x its default
# multithread threshold of 4). On a busy machine waking the pool costs milliseconds, so products
# stay under it and run on the calling thread.
MAX_PRODUCT_MACS = 2**18


@cache
def lowpass() -> np.ndarray:
    """The low-pass ``resample_poly`` would design for 320/441 (it scales it by ``UP``, the
    passband gain the zero-stuffed signal needs)."""
    # Imported at the first rendering: a process that only reads rendered audio never pays for it.
    from scipy.signal import firwin

    return firwin(2 * HALF + 1, 1.0 / DOWN, window=("kaiser", 5.0))


@dataclass(frozen=True)
class _Layout:
    """The exact product's plan: input offsets ``r`` from ``first_tap`` over ``span`` taps, and
    per block of phases (first phase, end phase, its first ``r`` within the span, coefficients
    [r, phase], integers times ``2**-COEFFICIENT_BITS``)."""

    first_tap: int
    span: int
    blocks: tuple[tuple[int, int, int, np.ndarray], ...]


@cache
def _layout() -> _Layout:
    h = np.round(lowpass() * UP * 2.0**COEFFICIENT_BITS)
    bounds = []
    for q0 in range(0, UP, PHASES_PER_PRODUCT):
        q1 = min(UP, q0 + PHASES_PER_PRODUCT)
        first = -((len(h) - 1 - DOWN * q0 - HALF) // UP)  # first r whose tap index is inside h
        bounds.append((q0, q1, first, (DOWN * (q1 - 1) + HALF) // UP))
    first_tap = min(first for _, _, first, _ in bounds)
    blocks = []
    for q0, q1, first, last in bounds:
        taps = DOWN * np.arange(q0, q1)[None, :] + HALF - UP * np.arange(first, last + 1)[:, None]
        inside = (taps >= 0) & (taps < len(h))
        block = np.where(inside, h[np.clip(taps, 0, len(h) - 1)], 0.0)
        # exactness: the largest possible partial sum of any output stays an integer below 2**53
        assert np.abs(block).sum(axis=0).max() * 2**15 < 2**53
        block *= 2.0**-COEFFICIENT_BITS  # a power of two: still exact, and no rescaling after
        block.flags.writeable = False
        blocks.append((q0, q1, first - first_tap, block))
    span = max(last for *_, last in bounds) - first_tap + 1
    return _Layout(first_tap, span, tuple(blocks))


def output_length(n_in: int) -> int:
    """Samples out for ``n_in`` in: ``ceil(n_in * 320 / 441)``, as ``resample_poly``."""
    return -(-n_in * UP // DOWN)


def resample_pcm16(samples: np.ndarray) -> np.ndarray:
    """int16 samples at 22,050 Hz -> float64 at 16 kHz (same scale), exactly (module docstring)."""
    if samples.dtype != np.int16:
        raise TypeError(f"resample_pcm16 takes int16 samples, got {samples.dtype}")
    layout = _layout()
    n_out = output_length(len(samples))
    periods = -(-n_out // UP)
    before = -layout.first_tap
    padded = np.empty(max(DOWN * (periods - 1) + layout.span, before + len(samples)))
    padded[:before] = 0.0
    padded[before : before + len(samples)] = samples
    padded[before + len(samples) :] = 0.0
    # row m: the input taps of period m, for every phase
    windows = as_strided(
        padded, (periods, layout.span), (DOWN * padded.itemsize, padded.itemsize), writeable=False
    )
    out = np.empty((periods, UP))
    for q0, q1, offset, block in layout.blocks:
        rows = windows[:, offset : offset + len(block)]
        step = max(1, MAX_PRODUCT_MACS // block.size)
        for m in range(0, periods, step):
            np.matmul(rows[m : m + step], block, out=out[m : m + step, q0:q1])
    return out.reshape(-1)[:n_out]


def resample_to_16k(samples: np.ndarray) -> np.ndarray:
    """Float samples at 22,050 Hz -> float64 at 16 kHz through ``resample_poly`` (same filter as
    ``resample_pcm16``; deterministic, slower)."""
    from scipy.signal import resample_poly

    return resample_poly(np.asarray(samples, dtype=np.float64), UP, DOWN, window=lowpass())
