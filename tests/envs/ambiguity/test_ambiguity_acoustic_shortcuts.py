"""No single acoustic scalar decides a contrast class beyond what the cue's nature allows (the
audit, its labels and its bound: ``agents/ambiguity/acoustic_shortcuts.py``)."""

from __future__ import annotations

import pytest

from agents.ambiguity.acoustic_shortcuts import FORBIDDEN, audit, clips, stump_balanced_accuracy
from hear_gym.envs.ambiguity.render import render_reading
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features


def test_length_scalars_equal_across_a_pairs_readings():
    """Default tier, a few pairs: the speech span Praat measures (the shortcut a length rule
    would use) is the same for both readings, whatever their pauses or stress."""
    pairs = [
        ("The coach said the player is late", dict(pause_after=()), dict(pause_after=(1, 4))),
        ("咬死了猎人的狗", dict(pause_after=(2,)), dict(pause_after=(4,))),
        ("I didn't say Mark took the car", dict(stress=(3,)), dict(stress=(6,))),
    ]
    index = FEATURE_NAMES.index("duration_s")
    for text, a, b in pairs:
        language = "en" if text.isascii() else "zh"
        durations = [
            prosodic_features(render_reading(SpokenReading(text, language, **marks), "m3"))[index]
            for marks in (a, b)
        ]
        assert abs(durations[0] - durations[1]) <= 0.03, (text, durations)


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["espeak", "praat"])
def test_no_forbidden_scalar_decides_a_contrast(renderer):
    report = audit(clips(("m3", "f2"), renderer))
    failures = [
        (contrast, name, round(r["balanced_accuracy"][name], 3), round(r["bound"], 3))
        for contrast, r in report.items()
        for name in FORBIDDEN[contrast]
        if r["balanced_accuracy"][name] > r["bound"]
    ]
    assert not failures, failures


@pytest.mark.slow
def test_the_cue_itself_decides_where_it_is_one_scalar():
    """The check has teeth: the scalar that is the cue does decide (intonation: final F0 slope;
    pause pairs that differ in their number of pauses: the silence share)."""
    every = clips(("m3",), "espeak")
    for contrast, name, keep in (
        ("intonation", "f0_final_slope_st_per_s", lambda c: True),
        ("pause", "pause_ratio", lambda c: c.pause_counts_differ),
    ):
        mine = [c for c in every if c.contrast == contrast and keep(c)]
        train, held = [c for c in mine if not c.held_out], [c for c in mine if c.held_out]
        assert stump_balanced_accuracy(train, held, name) >= 0.8, (contrast, name)
