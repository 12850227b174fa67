"""Single-scalar shortcut audit of the Ambiguity minimal pairs: can one utterance-level acoustic
scalar (``hear_gym.speech.features.FEATURE_NAMES``) tell a pair's readings apart?

Each class's cue is where a scalar may legitimately win: a pause is silence (silence share,
energy over the speech span, voicing fraction), intonation and tone are F0, stress is F0 and
energy at one word. What must not decide is what the cue is not (``FORBIDDEN``): a clip's length
(whole-utterance duration, leading silence) for every class, its overall energy where the cue is
F0 (intonation, tone), and for stress, a property of one word, every position-blind scalar
(``stress_shortcuts.POSITION_BLIND``). For intonation and tone a global F0 statistic is the cue
itself and may decide.

Labels (a reading against its partner): pause, more pauses, or with as many the first pause
earlier; stress, the stressed word earlier; intonation, rising; tone and heteronym, the forced
syllable's tone number lower. A one-split threshold rule (depth-1 tree, balanced classes) per
scalar is fit on the train split's pairs and scored on dev + test pairs by balanced accuracy.

Bound for a forbidden scalar: 0.65 balanced accuracy, near chance (a scalar equal in both
readings of a pair scores exactly one of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.ambiguity.stress_shortcuts import POSITION_BLIND
from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair
from hear_gym.envs.ambiguity.render import render_reading
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features

LENGTH = ("duration_s", "lead_silence_s")
BOUND = 0.65
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "pause": LENGTH,
    "intonation": (*LENGTH, "energy_mean_db"),
    "stress": POSITION_BLIND,
    "tone": (*LENGTH, "energy_mean_db", "energy_std_db"),
    "heteronym": LENGTH,
}


def label(contrast: str, mine: SpokenReading, other: SpokenReading) -> int | None:
    """1 when ``mine`` is the labelled side of the pair (module docstring); None: no label."""
    if contrast == "pause":
        if len(mine.pause_after) != len(other.pause_after):
            return int(len(mine.pause_after) > len(other.pause_after))
        return int(mine.pause_after[0] < other.pause_after[0])
    if contrast == "stress":
        return int(mine.stress[0] < other.stress[0])
    if contrast == "intonation":
        return int(mine.contour == "rise")
    tones = [int(r.pronounce[0][1][-1]) for r in (mine, other)]
    return None if tones[0] == tones[1] else int(tones[0] < tones[1])


@dataclass(frozen=True)
class Clip:
    contrast: str
    held_out: bool  # dev or test split
    item_id: str
    label: int
    scalars: np.ndarray  # FEATURE_NAMES order
    pause_counts_differ: bool


def clips(voices: tuple[str, ...], renderer: str) -> list[Clip]:
    out = []
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
                out.append(
                    Clip(item.contrast.value, item.split != "train", item.item_id, y, scalars, counts_differ)
                )
    return out


def stump_balanced_accuracy(train: list[Clip], held_out: list[Clip], scalar: str) -> float:
    """One scalar's threshold rule, fit on ``train``, balanced accuracy on ``held_out``."""
    from sklearn.tree import DecisionTreeClassifier

    j = FEATURE_NAMES.index(scalar)
    stump = DecisionTreeClassifier(max_depth=1, class_weight="balanced", random_state=0)
    stump.fit(np.array([[c.scalars[j]] for c in train]), [c.label for c in train])
    guess = stump.predict(np.array([[c.scalars[j]] for c in held_out]))
    truth = np.array([c.label for c in held_out])
    return float(np.mean([np.mean(guess[truth == k] == k) for k in (0, 1)]))


def audit(all_clips: list[Clip]) -> dict[str, dict]:
    """Per contrast class: the bound and every scalar's held-out balanced accuracy."""
    report = {}
    for contrast in FORBIDDEN:
        mine = [c for c in all_clips if c.contrast == contrast]
        train, held = [c for c in mine if not c.held_out], [c for c in mine if c.held_out]
        report[contrast] = {
            "held_out_pairs": len({c.item_id for c in held}),
            "bound": BOUND,
            "forbidden": list(FORBIDDEN[contrast]),
            "balanced_accuracy": {name: stump_balanced_accuracy(train, held, name) for name in FEATURE_NAMES},
        }
    return report
