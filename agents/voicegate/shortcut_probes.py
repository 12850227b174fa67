"""Single-scalar shortcut probes for VoiceGate: the rules a skeptical reviewer tries first.

A benchmark that one scalar solves is broken, so each family is attacked with every scalar:

* Side-talk (which of the two utterances is for the assistant?). Each scalar is measured per
  segment, cut at the manifest's true boundaries (the probes' best case, better than any VAD):
  the segment's own features (``SEGMENT_FEATURES`` of the audio gate: MFCC means, F0 level and
  spread, spectral centroid, roll-off, share above 2 kHz, energy spread, i.e. reverberance),
  plus duration, RMS and peak level, words per second (the transcript is observable under
  A+T) and position. A rule picks the segment with the larger value, or the smaller one.
* Speaker-switch (same speaker or switched?). Each scalar is measured on the whole input with
  no manifest (what an agent hears): the audio gate's ``GATE_FEATURES`` (the pause at the
  longest low-energy stretch, the change in every segment feature across it, the last
  segment's own features), the longest run of exact digital zeros in the 16-bit PCM, the number
  of speech stretches an energy VAD finds, and the duration. A rule is a threshold and a
  direction.

* Family contrasts (is this input self-talk, whose target is ``[Mute]``, or an act input? is it
  side-talk or a speaker-switch command?). Each scalar is measured on the whole input
  (``CONTRAST_SCALARS``): its duration, its number of utterances (read from the item: the
  transcript's sentences tell it under A+T), the speech stretches an energy VAD finds (the
  gate's VAD, and the onset count of eight finer ones: ``ONSET_VADS``, 25-35 dB below the peak,
  pauses of 50-150 ms, which count clause pauses too), the longest pause and the total energy. A rule is a threshold and a direction, fit and scored by
  *balanced* accuracy (the classes differ in size).

Rules are fit on train items (direction; threshold maximizing train accuracy) and scored on
held-out items, with a 95% CI from resampling item groups (a speaker-switch pair stays
together). Ties score one half (a coin flip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hear_gym.envs.voicegate.items.generator import select_items
from hear_gym.envs.voicegate.items.model import Addressee, Item
from hear_gym.envs.voicegate.items.pools import words
from hear_gym.envs.voicegate.scenes import render_item
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.change_features import (
    FRAME,
    GATE_FEATURES,
    SAMPLE_RATE,
    SEGMENT_FEATURES,
    frame_db,
    gate_features,
    segment_features,
    split_at_longest_pause,
)
from hear_gym.speech.scene import peak_dbfs, rms_dbfs
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, ratio_ci

SIDE_TALK_SCALARS = (*SEGMENT_FEATURES, "duration_s", "rms_db", "peak_db", "words_per_s", "position")
SWITCH_SCALARS = (*GATE_FEATURES, "longest_zero_run", "speech_stretches", "duration_s")
VAD_BELOW_PEAK_DB = 35.0  # the gate's own threshold (gate_features.SILENCE_BELOW_PEAK_DB)
VAD_MIN_PAUSE_S = 0.15
# (dB below the peak, shortest pause in ms) of the onset counters a reviewer tries beside the
# gate's VAD: a shorter pause or a lower threshold also counts the pauses inside an utterance
ONSET_VADS = tuple((db, ms) for db in (25, 30, 35) for ms in (50, 100, 150) if (db, ms) != (35, 150))
CONTRAST_SCALARS = (
    "duration_s",
    "utterances",
    "speech_stretches",
    "longest_pause_s",
    "energy_db",
    *(f"onsets_{db}db_{ms}ms" for db, ms in ONSET_VADS),
)
SAME_SPEAKER = (("speaker_switch", ("same_speaker",)),)  # the speaker-switch act input
ACT_INPUTS = (*SAME_SPEAKER, ("side_talk", None))  # every act-target input with audio (cue validity aside)
CONTRASTS = {  # name: (positive inputs, negative inputs), each (family, conditions or None)
    "self_talk vs act": ((("self_talk", None),), ACT_INPUTS),
    "self_talk vs same_speaker": ((("self_talk", None),), SAME_SPEAKER),
    "side_talk vs same_speaker": ((("side_talk", None),), SAME_SPEAKER),
    # the whole audio benchmark's mute/act decision: the switch keeps the paper's 600 ms gap
    "mute vs act": ((("speaker_switch", ("switch",)), ("self_talk", None)), ACT_INPUTS),
}


def longest_zero_run(wave: np.ndarray) -> int:
    """Longest run of samples that are exactly zero once written as 16-bit PCM."""
    zero = np.round(np.asarray(wave, dtype=np.float64) * 32767) == 0
    edges = np.diff(np.concatenate([[0], zero.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max()) if len(starts) else 0


def speech_stretches(
    wave: np.ndarray, below_peak_db: float = VAD_BELOW_PEAK_DB, min_pause_s: float = VAD_MIN_PAUSE_S
) -> int:
    """Speech runs (onsets) an energy VAD finds: 10 ms frames within ``below_peak_db`` of the
    loudest, pauses of at least ``min_pause_s`` between runs."""
    db = frame_db(wave)
    speech = db > db.max() - below_peak_db
    min_pause = int(round(min_pause_s * SAMPLE_RATE / FRAME))
    runs, silent = 0, min_pause
    for is_speech in speech:
        if is_speech:
            runs += silent >= min_pause
            silent = 0
        else:
            silent += 1
    return runs


def segment_scalars(segment: np.ndarray, text: str, position: int) -> np.ndarray:
    """``SIDE_TALK_SCALARS`` of one side-talk segment."""
    duration = len(segment) / SAMPLE_RATE
    extra = [duration, rms_dbfs(segment), peak_dbfs(segment), len(words(text)) / duration, position]
    return np.concatenate([segment_features(segment), extra]).astype(np.float64)


def input_scalars(wave: np.ndarray) -> np.ndarray:
    """``SWITCH_SCALARS`` of one input."""
    extra = [longest_zero_run(wave), speech_stretches(wave), len(wave) / SAMPLE_RATE]
    return np.concatenate([gate_features(wave), extra]).astype(np.float64)


def contrast_scalars(item: Item, wave: np.ndarray) -> np.ndarray:
    """``CONTRAST_SCALARS`` of one input."""
    energy_db = 10 * np.log10(np.sum(np.asarray(wave, dtype=np.float64) ** 2) + 1e-12)
    pause = split_at_longest_pause(np.asarray(wave, dtype=np.float32))[2]
    utterances = len(item.segments)
    onsets = [speech_stretches(wave, db, ms / 1000) for db, ms in ONSET_VADS]
    return np.array(
        [len(wave) / SAMPLE_RATE, utterances, speech_stretches(wave), pause, energy_db, *onsets], float
    )


def contrast_items(contrast: str, split: str) -> tuple[list[Item], np.ndarray]:
    """The inputs of one of ``CONTRASTS`` in ``split`` and their labels (1: the first side)."""
    sides = [
        [item for family, conditions in side for item in select_items(family, split, conditions)]
        for side in CONTRASTS[contrast]
    ]
    return [*sides[0], *sides[1]], np.array([1] * len(sides[0]) + [0] * len(sides[1]))


def contrast_table(items: Sequence[Item], cache: RenderCache) -> np.ndarray:
    """(items, ``CONTRAST_SCALARS``) of whole inputs."""
    return np.array([contrast_scalars(item, render_item(item, cache)[0]) for item in items])


def side_talk_table(items: Sequence[Item], cache: RenderCache) -> np.ndarray:
    """(items, 2, scalars): the assistant-directed segment's scalars, then the other's."""
    rows = []
    for item in items:
        wave, manifest = render_item(item, cache)
        per_segment = []
        for position, record in enumerate(manifest["segments"]):
            start, end = round(record["start_s"] * SAMPLE_RATE), round(record["end_s"] * SAMPLE_RATE)
            utterance = item.utterances[record["utterance"]]
            scalars = segment_scalars(wave[start:end], utterance.text, position)
            per_segment.append((utterance.addressee, scalars))
        rows.append(
            [
                next(s for a, s in per_segment if a is Addressee.ASSISTANT),
                next(s for a, s in per_segment if a is not Addressee.ASSISTANT),
            ]
        )
    return np.array(rows)


def switch_table(
    items: Sequence[Item], cache: RenderCache, scalars: Callable[[np.ndarray], np.ndarray] = input_scalars
) -> np.ndarray:
    """(items, scalars) of whole inputs."""
    return np.array([scalars(render_item(item, cache)[0]) for item in items])


@dataclass(frozen=True)
class ScalarRule:
    name: str
    direction: int  # +1: larger means the positive answer (assistant-directed / switched)
    threshold: float | None  # None for side-talk's pairwise choice
    train_accuracy: float
    test: Estimate


def _pair_correct(table: np.ndarray, k: int, direction: int) -> np.ndarray:
    diff = direction * (table[:, 0, k] - table[:, 1, k])
    return np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))


def _ci(correct: np.ndarray, groups: Sequence[str], seed: int = 0) -> Estimate:
    names = sorted(set(groups))
    index = np.array([names.index(g) for g in groups])
    return ratio_ci(
        RatioSums(
            np.bincount(index, weights=correct, minlength=len(names)),
            np.bincount(index, minlength=len(names)).astype(float),
        ),
        seed=seed,
    )


def fit_side_talk(train: np.ndarray, test: np.ndarray, test_groups: Sequence[str]) -> list[ScalarRule]:
    """Every side-talk scalar's pick-the-larger/smaller rule, best held-out accuracy first."""
    rules = []
    for k, name in enumerate(SIDE_TALK_SCALARS):
        larger = float(_pair_correct(train, k, 1).mean())
        direction = 1 if larger >= 0.5 else -1
        rules.append(
            ScalarRule(
                name,
                direction,
                None,
                max(larger, 1 - larger),
                _ci(_pair_correct(test, k, direction), test_groups),
            )
        )
    return sorted(rules, key=lambda r: -r.test.point)


def _best_threshold(x: np.ndarray, y: np.ndarray, balanced: bool = False) -> tuple[int, float, float]:
    """(direction, threshold, train accuracy) of the rule ``direction * (x - threshold) > 0``
    that classifies ``y`` (1 = positive) best; ``balanced``: by the mean of the two classes'
    accuracies."""
    values = np.unique(x)
    cuts = np.concatenate([[values[0] - 1], (values[:-1] + values[1:]) / 2, [values[-1] + 1]])
    above = x[None, :] > cuts[:, None]
    weights = _class_weights(y) if balanced else np.full(len(y), 1 / len(y))
    accuracy_up = ((above == (y[None, :] == 1)) * weights).sum(axis=1)
    best_up, best_down = int(np.argmax(accuracy_up)), int(np.argmax(1 - accuracy_up))
    if accuracy_up[best_up] >= 1 - accuracy_up[best_down]:
        return 1, float(cuts[best_up]), float(accuracy_up[best_up])
    return -1, float(cuts[best_down]), float(1 - accuracy_up[best_down])


def fit_threshold(
    name: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    test_groups: Sequence[str],
    balanced: bool = False,
) -> ScalarRule:
    """One scalar's threshold rule (positive: switched, or a contrast's first family), fit on
    train, scored on test; ``balanced``: fit and scored by balanced accuracy (``train_accuracy``
    too)."""
    direction, threshold, train_accuracy = _best_threshold(x_train, y_train, balanced=balanced)
    correct = ((direction * (x_test - threshold) > 0) == (y_test == 1)).astype(float)
    held_out = balanced_ci(correct, y_test, test_groups) if balanced else _ci(correct, test_groups)
    return ScalarRule(name, direction, threshold, train_accuracy, held_out)


def _class_weights(y: np.ndarray) -> np.ndarray:
    """Per-item weights that give each class half the total (balanced accuracy)."""
    positive = y == 1
    return np.where(positive, 0.5 / positive.sum(), 0.5 / (~positive).sum())


def balanced_ci(correct: np.ndarray, y: np.ndarray, groups: Sequence[str], seed: int = 0) -> Estimate:
    """Balanced accuracy (the mean of the two classes' accuracies) with a 95% CI from resampling
    item groups."""
    names = sorted(set(groups))
    index = np.array([names.index(g) for g in groups])

    def class_sums(label: int) -> RatioSums:
        member = (y == label).astype(float)
        return RatioSums(
            np.bincount(index, weights=correct * member, minlength=len(names)),
            np.bincount(index, weights=member, minlength=len(names)),
        )

    return contrast_ci([(0.5, class_sums(1)), (0.5, class_sums(0))], seed=seed)


def fit_contrast(
    train: np.ndarray, y_train: np.ndarray, test: np.ndarray, y_test: np.ndarray, test_groups: Sequence[str]
) -> list[ScalarRule]:
    """Every ``CONTRAST_SCALARS`` rule (positive: the first family of the contrast), best
    held-out balanced accuracy first."""
    rules = [
        fit_threshold(name, train[:, k], y_train, test[:, k], y_test, test_groups, balanced=True)
        for k, name in enumerate(CONTRAST_SCALARS)
    ]
    return sorted(rules, key=lambda r: -r.test.point)


def fit_switch(
    train: np.ndarray, y_train: np.ndarray, test: np.ndarray, y_test: np.ndarray, test_groups: Sequence[str]
) -> list[ScalarRule]:
    """Every speaker-switch scalar's threshold rule, best held-out accuracy first."""
    rules = [
        fit_threshold(name, train[:, k], y_train, test[:, k], y_test, test_groups)
        for k, name in enumerate(SWITCH_SCALARS)
    ]
    return sorted(rules, key=lambda r: -r.test.point)


def rule(rules: list[ScalarRule], name: str) -> ScalarRule:
    return next(r for r in rules if r.name == name)


def spread(items: Sequence[Item], n: int) -> list[Item]:
    """``n`` items evenly spread over ``items`` (a deterministic subset)."""
    if n >= len(items):
        return list(items)
    return [items[i] for i in np.linspace(0, len(items) - 1, n).round().astype(int)]
