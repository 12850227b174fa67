"""Compile, once per environment, the numba kernels of librosa that the speech features use.

librosa keeps its numba-compiled functions in a cache beside its sources (site-packages, or
``$NUMBA_CACHE_DIR``). Until that cache exists, the first process that computes a VoiceGate gate
feature spends 10-20 s compiling them on a 2-core machine, inside whatever run or test comes
first, and every process started before the cache is written pays again. ``make`` runs this
module right after installing, as pip compiles bytecode at install time.

    python -m hear_gym.speech.jit_warmup
"""

from __future__ import annotations

import time

import numpy as np

from hear_gym.speech.change_features import SAMPLE_RATE, gate_features


def warm_up() -> float:
    """Compute the gate features of one fixed second of audio; returns the seconds it took."""
    start = time.perf_counter()
    t = np.arange(SAMPLE_RATE, dtype=np.float32) / SAMPLE_RATE
    tone = 0.1 * np.sin(2 * np.pi * 140 * t) * (np.abs(t - 0.5) > 0.1)  # two voiced halves, one pause
    gate_features(tone.astype(np.float32))
    return time.perf_counter() - start


if __name__ == "__main__":
    print(f"librosa's numba kernels ready ({warm_up():.1f} s)")
