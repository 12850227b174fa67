"""The shared prefix must not sound different from the branches: no scalar of a prefix's last
300 ms (harmonicity, spectral flatness, RMS, F0 statistics; ``agents.onset.tail_scalars``) may
time the onset better than elapsed time does.

Each control is the shared classifier fit on train to tell Wait from act, from the prefix
duration and one tail scalar; the reference is the same classifier on the duration alone. The
paired group-bootstrap difference in onset exactness on test (1,000 draws, seed 0) must not lie
above zero. With a two-voice averaged prefix, harmonicity alone timed the onset in about three
trajectories of four; elapsed time in about one of three.

The smoke version uses the first groups of each split; the full version (``slow``) all of them.
Both run for each renderer (the ``renderer`` fixture: eSpeak in the default tier, the others slow).
"""

from functools import cache

import numpy as np
import pytest

from agents.onset.probes import prefix_rows, trajectory_records
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES, tail_scalars, timing_predictions
from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.envs.onset.metrics import paired_difference

SMOKE_GROUPS = {"train": 48, "test": 24}


@cache
def _tail_blocks(limit_train: int | None, limit_test: int | None, renderer: str):
    """(rows, duration column, tail scalars) of train (clean) and test (clean and noise15)."""
    out = []
    for split, limit in (("train", limit_train), ("test", limit_test)):
        rows = prefix_rows(split, limit_groups=limit, renderer=renderer)
        waves = [r.waveform() for r in rows]
        duration = np.array([[len(w) / AUDIO_RATE] for w in waves])
        out.append((rows, duration, np.stack([tail_scalars(w) for w in waves])))
    return out


def _excess_over_elapsed(name: str, limit_train: int | None, limit_test: int | None, renderer: str):
    (train, d_train, s_train), (test, d_test, s_test) = _tail_blocks(limit_train, limit_test, renderer)
    targets = [r.target for r in train]
    column = TAIL_SCALAR_NAMES.index(name)
    with_scalar = timing_predictions(
        np.column_stack([d_train, s_train[:, column]]), targets, np.column_stack([d_test, s_test[:, column]])
    )
    elapsed = timing_predictions(d_train, targets, d_test)
    return paired_difference(
        trajectory_records(test, with_scalar), trajectory_records(test, elapsed), "onset_exactness"
    )


@pytest.mark.parametrize("name", TAIL_SCALAR_NAMES)
def test_tail_scalar_times_the_onset_no_better_than_elapsed_time_smoke(name, renderer):
    excess = _excess_over_elapsed(name, SMOKE_GROUPS["train"], SMOKE_GROUPS["test"], renderer)
    assert excess.low <= 0.0, (name, renderer, excess)


@pytest.mark.slow
@pytest.mark.parametrize("name", TAIL_SCALAR_NAMES)
def test_tail_scalar_times_the_onset_no_better_than_elapsed_time(name, renderer):
    excess = _excess_over_elapsed(name, None, None, renderer)
    assert excess.low <= 0.0, (name, renderer, excess)
