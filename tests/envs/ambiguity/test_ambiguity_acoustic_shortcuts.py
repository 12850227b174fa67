"""No single acoustic scalar decides a contrast class beyond what the cue's nature allows.

Each class's cue is where a scalar may legitimately win: a pause is silence (silence share,
energy over the speech span, voicing fraction), intonation and tone are F0, stress is F0 and
energy at one word. What must not decide is what the cue is not: a clip's length (whole-utterance
duration, leading silence) for every class, and its overall energy and F0 level where the cue is
local (stress moves one word; a tone one syllable). The renderer gives every reading of a text the
same length, so these sit at chance by construction, and this checks it.

Labels (a reading against its partner): pause: more pauses, or with as many, the first pause
earlier; stress: the stressed word earlier; intonation: rising; tone and heteronym: the forced
syllable's tone number lower. One-split threshold rules (a depth-1 tree on one scalar, balanced
classes) are fit on the train split's pairs and scored on dev + test pairs by balanced accuracy.

Bound: chance plus 2.5 standard errors at the pair level, 0.5 + 2.5 * 0.5 / sqrt(pairs): a scalar
identical in both readings of a pair scores exactly one of the two, so what a rule can gain above
0.5 comes from differences between the readings and is bounded by the number of pairs.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from hear_gym.envs.ambiguity.render import render_reading
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features

LENGTH = ("duration_s", "lead_silence_s")
FORBIDDEN = {
    "pause": LENGTH,
    "intonation": (*LENGTH, "energy_mean_db"),
    "stress": (*LENGTH, "energy_mean_db", "f0_mean_st"),
    "tone": (*LENGTH, "energy_mean_db", "energy_std_db"),
    "heteronym": LENGTH,
}


def label(contrast: str, mine: SpokenReading, other: SpokenReading) -> int | None:
    if contrast == "pause":
        if len(mine.pause_after) != len(other.pause_after):
            return int(len(mine.pause_after) > len(other.pause_after))
        return int(mine.pause_after[0] < other.pause_after[0])
    if contrast == "stress":
        return int(mine.stress[0] < other.stress[0])
    if contrast == "intonation":
        return int(mine.contour == "rise")
    tones = [int(dict(r.pronounce)[i][-1]) for r in (mine, other) for i in [r.pronounce[0][0]]]
    return None if tones[0] == tones[1] else int(tones[0] < tones[1])


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


def _scalar_table(voices: tuple[str, ...], renderer: str):
    from hear_gym.envs.ambiguity.items.generator import all_items
    from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair

    rows = []  # (contrast, held out, pair id, label, scalars, the readings' pause counts differ)
    for item in all_items():
        if not (isinstance(item, PhonologicalPair) and item.contrast in AUDIO_DECIDED):
            continue
        readings = tuple(u.spoken for u in item.readings)
        counts_differ = len(readings[0].pause_after) != len(readings[1].pause_after)
        for side in (0, 1):
            y = label(item.contrast.value, readings[side], readings[1 - side])
            if y is None:
                continue
            for voice in voices:
                scalars = prosodic_features(render_reading(readings[side], voice, renderer))
                rows.append(
                    (item.contrast.value, item.split != "train", item.item_id, y, scalars, counts_differ)
                )
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["espeak", "praat"])
def test_no_forbidden_scalar_decides_a_contrast(renderer):
    rows = _scalar_table(("m3", "f2"), renderer)
    failures = []
    for contrast, forbidden in FORBIDDEN.items():
        mine = [r for r in rows if r[0] == contrast]
        train = [r for r in mine if not r[1]]
        held = [r for r in mine if r[1]]
        pairs = len({r[2] for r in held})
        bound = 0.5 + 2.5 * 0.5 / np.sqrt(pairs)
        for name in forbidden:
            j = FEATURE_NAMES.index(name)
            x_train = np.array([[r[4][j]] for r in train])
            stump = DecisionTreeClassifier(max_depth=1, class_weight="balanced", random_state=0)
            stump.fit(x_train, [r[3] for r in train])
            guess = stump.predict(np.array([[r[4][j]] for r in held]))
            truth = np.array([r[3] for r in held])
            balanced = np.mean([np.mean(guess[truth == c] == c) for c in (0, 1)])
            if balanced > bound:
                failures.append((contrast, name, round(float(balanced), 3), round(float(bound), 3)))
    assert not failures, failures


@pytest.mark.slow
def test_the_cue_itself_decides_where_it_is_one_scalar():
    """The check has teeth: the scalar that is the cue does decide (intonation: final F0 slope;
    pause pairs that differ in their number of pauses: the silence share)."""
    rows = _scalar_table(("m3",), "espeak")
    for contrast, name, keep in (
        ("intonation", "f0_final_slope_st_per_s", lambda r: True),
        ("pause", "pause_ratio", lambda r: r[5]),
    ):
        j = FEATURE_NAMES.index(name)
        mine = [r for r in rows if r[0] == contrast and keep(r)]
        train, held = [r for r in mine if not r[1]], [r for r in mine if r[1]]
        stump = DecisionTreeClassifier(max_depth=1, class_weight="balanced", random_state=0)
        stump.fit(np.array([[r[4][j]] for r in train]), [r[3] for r in train])
        accuracy = np.mean(
            stump.predict(np.array([[r[4][j]] for r in held])) == np.array([r[3] for r in held])
        )
        assert accuracy >= 0.8, (contrast, name, accuracy)
