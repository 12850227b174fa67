"""The setup step ``python -m hear_gym.speech.jit_warmup`` leaves librosa's numba kernels in
numba's on-disk cache, so no run or test compiles them again."""

import os
from pathlib import Path

import librosa

from hear_gym.speech.jit_warmup import warm_up


def test_the_warm_up_leaves_librosas_kernels_cached():
    assert warm_up() > 0.0
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    cache = Path(explicit) if explicit else Path(librosa.__file__).parent
    for kernel in ("_cabs2", "_zc_wrapper", "_pi_wrapper", "_localmax"):
        assert list(cache.rglob(f"*{kernel}-*.nbi")), kernel
