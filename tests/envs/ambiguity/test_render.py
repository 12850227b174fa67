"""Rendering of Ambiguity readings: deterministic, a heterograph's spellings alike, and every
contrast audible: the measured cue moves the right way (Praat measurements, ``cues.py``). Equal
length across a pair's readings: ``test_ambiguity_acoustic_shortcuts.py``."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from hear_gym.envs.ambiguity import cues
from hear_gym.envs.ambiguity.render import render_aligned, render_reading, render_text
from hear_gym.envs.ambiguity.spoken import SpokenReading

PAUSE_EN = (
    SpokenReading("Let's eat Grandma", "en", pause_after=(1,)),
    SpokenReading("Let's eat Grandma", "en"),
)
STRESS_EN = (
    SpokenReading("I didn't say Mark took the car", "en", stress=(3,)),
    SpokenReading("I didn't say Mark took the car", "en", stress=(4,)),
)
INTONATION_EN = (
    SpokenReading("It's raining again", "en", contour="rise"),
    SpokenReading("It's raining again", "en"),
)
PAUSE_ZH = (
    SpokenReading("咬死了猎人的狗", "zh", pause_after=(2,)),
    SpokenReading("咬死了猎人的狗", "zh", pause_after=(4,)),
)


def _digest(waveform: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(waveform, dtype=np.float32).tobytes()).hexdigest()


MIXED = SpokenReading("我想买书", "zh", pause_after=(1,), stress=(3,), pronounce=((2, "mai4"),))


def test_rendering_is_bit_identical_in_a_process():
    first = _digest(render_aligned(MIXED, "f2", "praat")[0])
    render_aligned(STRESS_EN[0], "m3", "praat")  # some history in this process (Praat's generator too)
    assert _digest(render_aligned(MIXED, "f2", "praat")[0]) == first


@pytest.mark.slow
def test_rendering_is_bit_identical_across_processes():
    """Slow tier (a fresh interpreter costs 5 s); the all-envs test covers the env's audio too."""
    here = {name: _digest(render_aligned(MIXED, "f2", name)[0]) for name in ("espeak", "praat")}
    code = (
        "import hashlib, numpy as np\n"
        "from hear_gym.envs.ambiguity.render import render_reading\n"
        "from hear_gym.envs.ambiguity.spoken import SpokenReading\n"
        "r = SpokenReading('我想买书', 'zh', pause_after=(1,), stress=(3,), pronounce=((2, 'mai4'),))\n"
        "for name in ('espeak', 'praat'):\n"
        "    w = np.ascontiguousarray(render_reading(r, 'f2', name), dtype=np.float32)\n"
        "    print(name, hashlib.sha256(w.tobytes()).hexdigest())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert dict(line.split() for line in out.splitlines()) == here


def test_cached_rendering_is_read_only_and_16k():
    waveform = render_reading(PAUSE_EN[0], "m1")
    assert waveform.dtype == np.float32 and waveform.ndim == 1 and not waveform.flags.writeable
    assert render_reading(PAUSE_EN[0], "m1") is waveform
    assert 1.0 < len(waveform) / 16_000 < 3.0
    plain = render_text("Let's eat, Grandma.", "en", "m1")
    assert plain.dtype == np.float32 and len(plain) > 8_000


MINIMUM = {  # a difference a listener hears, well above measurement noise
    "pause/silence_s": 0.2,
    "stress/f0_peak_st": 1.0,
    "stress/log_voiced_duration_ratio": 0.1,
    "stress/energy_db": 1.0,
    "intonation/final_slope_st_per_s": 5.0,
}


def _cue_values(pairs_and_renderers, voice: str = "m1") -> dict[str, list[float]]:
    by_cue: dict[str, list[float]] = {}
    for pair, renderer in pairs_and_renderers:
        for cue in cues.measure_pair(pair, voice, renderer).cues:
            by_cue.setdefault(f"{cue.contrast}/{cue.cue}", []).append(cue.value)
    return by_cue


def test_each_cue_moves_the_right_way():
    """One pair per class, the renderers taking turns (both on every item: the slow test)."""
    by_cue = _cue_values(
        [(PAUSE_EN, "espeak"), (STRESS_EN, "espeak"), (INTONATION_EN, "praat"), (PAUSE_ZH, "praat")]
    )
    assert set(by_cue) == set(MINIMUM)
    for name, values in by_cue.items():
        assert min(values) > MINIMUM[name], (name, values)


def _four_tones(renderer: str, voice: str = "m1") -> list[int | None]:
    readings = [SpokenReading("他去看孩子", "zh", pronounce=((2, f"kan{tone}"),)) for tone in (1, 2, 3, 4)]
    measured = []
    for reading in readings:
        waveform, spans = render_aligned(reading, voice, renderer)
        measured += cues.tone_matches(reading, cues.track(waveform), spans)
    return [shape for _, shape in measured]


def test_forced_tones_show_their_shape():
    """Each of the four tones on the same syllable, measured by its F0 contour's shape."""
    assert _four_tones("espeak") == [1, 2, 3, 4]


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["espeak", "praat"])
def test_cues_on_the_suite_items(renderer):
    """Every audio-decided minimal pair of the suite's test split (voice m1): each cue in the
    right direction by a clear margin on at least 95% of pairs, the forced tones' shapes read
    back on at least 90% of syllables."""
    from hear_gym.envs.ambiguity.items.generator import all_items
    from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair

    pairs = [
        tuple(u.spoken for u in item.readings)
        for item in all_items()
        if isinstance(item, PhonologicalPair) and item.contrast in AUDIO_DECIDED and item.split == "test"
    ]
    by_cue, tones = {}, []
    for pair in pairs:
        measured = cues.measure_pair(pair, "m1", renderer)
        tones += measured.tones
        for cue in measured.cues:
            by_cue.setdefault(f"{cue.contrast}/{cue.cue}", []).append(cue.value)
    assert set(by_cue) == set(MINIMUM)
    for name, values in by_cue.items():
        assert np.mean(np.asarray(values) > MINIMUM[name]) >= 0.95, (name, np.round(values, 2))
    assert np.mean([forced == shape for forced, shape in tones]) >= 0.9, tones


def test_spellings_said_alike_sound_alike():
    """A heterograph pair's readings: different spellings, the same sound, bit for bit."""
    for a, b in (
        (SpokenReading("Where is the mail", "en"), SpokenReading("Where is the male", "en")),
        (
            SpokenReading("这件事没有意义", "zh", pronounce=((5, "yi4"), (6, "yi4"))),
            SpokenReading("这件事没有异议", "zh", pronounce=((5, "yi4"), (6, "yi4"))),
        ),
    ):
        assert np.array_equal(render_reading(a, "m3", "praat"), render_reading(b, "m3", "praat"))


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="renderer"):
        render_reading(PAUSE_EN[0], "m1", renderer="festival")
    with pytest.raises(ValueError, match="voice"):
        render_reading(PAUSE_EN[0], "nobody")
    with pytest.raises(TypeError, match="SpokenReading"):
        render_reading("Let's eat Grandma", "m1")
    with pytest.raises(ValueError, match="pinyin"):
        SpokenReading("我想买书", "zh", pronounce=((2, "buy"),))
    with pytest.raises(ValueError, match="outside"):
        SpokenReading("Let's eat Grandma", "en", stress=(3,))
