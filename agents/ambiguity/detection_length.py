"""Length shortcut audit of the detection tasks (omission, coreference): can a clip's length or
its transcript's token count tell an item (gold "yes") from its control (gold "no")?

Per phenomenon x language cell, two rules per scalar:

* unpaired: a one-split threshold rule (depth-1 tree, balanced classes) fit on the train split's
  items and controls, balanced accuracy on dev + test;
* paired: within each item and its control (every split: the rule has nothing to fit but its
  direction), "the longer one is the control" or "the shorter one is", whichever scores better,
  equal lengths counting half.

Tokens are what the transcript shows (``bare_words``): words in English, characters in Mandarin.
A clip's length is the env's turn audio (its utterances joined by ``TURN_GAP_S`` of silence).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import DetectAndAnswer, Utterance
from hear_gym.envs.ambiguity.spoken import tokenize

Measure = Callable[[tuple[Utterance, ...], str], float]


def token_count(said: tuple[Utterance, ...], language: str) -> float:
    return float(sum(len(tokenize(u.bare, language)) for u in said))


def clip_seconds(voice: str = "m3", renderer: str = "espeak") -> Measure:
    from hear_gym.envs.ambiguity.env import AUDIO_RATE, TURN_GAP_S
    from hear_gym.envs.ambiguity.render import render_text

    def seconds(said: tuple[Utterance, ...], language: str) -> float:
        samples = sum(len(render_text(u.written, language, voice, renderer)) for u in said)
        return samples / AUDIO_RATE + TURN_GAP_S * (len(said) - 1)

    return seconds


@dataclass(frozen=True)
class Pair:
    cell: str  # phenomenon-language
    held_out: bool
    item: float  # the scalar on the item (gold yes)
    control: float  # ... and on its control (gold no)


def pairs(measure: Measure) -> list[Pair]:
    out = []
    for item in all_items():
        if isinstance(item, DetectAndAnswer):
            out.append(
                Pair(
                    f"{item.phenomenon.value}-{item.language}",
                    item.split != "train",
                    measure(item.context, item.language),
                    measure(item.control, item.language),
                )
            )
    return out


def threshold_balanced_accuracy(train: list[Pair], held_out: list[Pair]) -> float:
    from sklearn.tree import DecisionTreeClassifier

    def rows(ps: list[Pair]) -> tuple[np.ndarray, np.ndarray]:
        x = np.array([[p.item] for p in ps] + [[p.control] for p in ps])
        return x, np.array([1] * len(ps) + [0] * len(ps))

    stump = DecisionTreeClassifier(max_depth=1, class_weight="balanced", random_state=0)
    stump.fit(*rows(train))
    x, y = rows(held_out)
    guess = stump.predict(x)
    return float(np.mean([np.mean(guess[y == k] == k) for k in (0, 1)]))


def paired_accuracy(held_out: list[Pair]) -> float:
    control_longer = np.mean(
        [1.0 if p.control > p.item else 0.5 if p.control == p.item else 0.0 for p in held_out]
    )
    return float(max(control_longer, 1 - control_longer))


def audit(measure: Measure) -> dict[str, dict[str, float]]:
    """Per cell: pairs, held-out pairs, the paired rule's accuracy and the threshold rule's
    held-out balanced accuracy."""
    by_cell: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs(measure):
        by_cell[p.cell].append(p)
    report = {}
    for cell, mine in sorted(by_cell.items()):
        train, held = [p for p in mine if not p.held_out], [p for p in mine if p.held_out]
        report[cell] = {
            "pairs": len(mine),
            "held_out_pairs": len(held),
            "paired": paired_accuracy(mine),
            "threshold": threshold_balanced_accuracy(train, held),
        }
    return report
