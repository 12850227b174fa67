"""The branch construction: pre-onset prefixes byte-identical within a pair (clean and noise),
the onset prefix branch-specific, the splice at a quiet point near the midpoint with no level
step, equal durations, nested crops, a 15 dB pair-level noise, and the same audio in and across
processes; for every renderer (the ``renderer`` fixture: eSpeak in the default tier)."""

import hashlib
import json
import subprocess
import sys

import numpy as np

from hear_gym.envs.onset.groups.generator import select_groups
from hear_gym.envs.onset.groups.model import N_PREFIXES
from hear_gym.envs.onset.scenes import (
    CROSSFADE_MS,
    NOISE_SNR_DB,
    SPEECH_DBFS,
    SPLICE_FRAME_MS,
    SPLICE_WINDOW,
    build_group,
    source_cache,
)

# every onset fraction, clean-only and noisy groups
SAMPLE = [*select_groups("train")[::52], *select_groups("test")[::16]]


def test_pre_onset_prefixes_are_byte_identical_and_the_onset_prefix_is_not(renderer):
    assert {g.onset_index for g in SAMPLE} == {1, 2, 3}
    for group in SAMPLE:
        rendered = build_group(group, renderer)
        for rendering in group.renderings:
            for k in range(N_PREFIXES):
                a, b = (rendered.prefix(branch, rendering, k) for branch in ("a", "b"))
                assert len(a) == len(b)
                if k < group.onset_index:
                    assert a.tobytes() == b.tobytes(), (group.group_id, rendering, k)
                else:
                    assert a.tobytes() != b.tobytes(), (group.group_id, rendering, k)


def test_the_splice_lies_near_the_midpoint_between_the_last_wait_prefix_and_the_onset_prefix(renderer):
    for group in SAMPLE:
        rendered = build_group(group, renderer)
        ends, k = rendered.prefix_ends, group.onset_index
        middle, half = (ends[k - 1] + ends[k]) // 2, SPLICE_WINDOW * (ends[k] - ends[k - 1])
        assert abs(rendered.divergence - middle) <= half
        assert rendered.divergence + int(16 * CROSSFADE_MS) < ends[k]
        a, b = (rendered.waveforms[(br, "clean")] for br in ("a", "b"))
        first_difference = int(np.flatnonzero(a != b)[0])
        assert ends[k - 1] <= rendered.divergence <= first_difference < ends[k]


def test_most_splices_fall_in_a_pause_or_closure_and_none_steps_the_level(renderer):
    """A splice frame at least 20 dB under the speech level in three groups of four (a window of
    continuous voicing has no such frame); the continuation's gain over the shared span under 1 dB."""
    quiet, frame = [], int(16 * SPLICE_FRAME_MS)
    for group in SAMPLE:
        rendered = build_group(group, renderer)
        for branch in ("a", "b"):
            at = rendered.waveforms[(branch, "clean")][rendered.divergence :][:frame].astype(np.float64)
            quiet.append(10 * np.log10(np.mean(at**2)) < SPEECH_DBFS - 20)
            assert abs(rendered.manifest["continuation_gain_db"][branch]) < 1.0, group.group_id
    assert np.mean(quiet) >= 0.75, quiet


def test_crops_are_nested_and_noise_is_added_before_cropping_at_15_db(renderer):
    group = select_groups("test")[5]
    rendered = build_group(group, renderer)
    for branch in ("a", "b"):
        for rendering in group.renderings:
            full = rendered.waveforms[(branch, rendering)]
            for k in range(N_PREFIXES):
                assert np.array_equal(rendered.prefix(branch, rendering, k), full[: rendered.prefix_ends[k]])
    clean = [rendered.waveforms[(b, "clean")].astype(np.float64) for b in ("a", "b")]
    noise = [rendered.waveforms[(b, "noise15")] - c for b, c in zip(("a", "b"), clean, strict=True)]
    # one realization per pair, wherever no waveform of the group sits at full scale (clipped)
    unclipped = np.all([np.abs(w) < 1.0 for w in rendered.waveforms.values()], axis=0)
    assert unclipped.mean() > 0.999
    np.testing.assert_allclose(noise[0][unclipped], noise[1][unclipped], atol=1e-6)
    snr = 10 * np.log10(np.mean([np.mean(c**2) for c in clean]) / np.mean(noise[0] ** 2))
    assert abs(snr - NOISE_SNR_DB) < 0.2


def _hashes(renderer: str) -> list[str]:
    """Hashes of freshly rendered groups: the source renderings' cache is emptied first."""
    source_cache.cache_clear()
    return [
        hashlib.sha256(w.tobytes()).hexdigest()
        for g in SAMPLE[:3]
        for w in build_group(g, renderer).waveforms.values()
    ]


def test_same_audio_in_and_across_processes(renderer):
    first = _hashes(renderer)
    assert _hashes(renderer) == first
    code = (
        "import json, sys; sys.path.insert(0, 'tests/envs/onset'); "
        f"from test_onset_construction import _hashes; print(json.dumps(_hashes({renderer!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == first
