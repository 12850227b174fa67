"""Ambiguity's answers: one of a question's lettered options, as a Discrete index or a text reply.

Every question has 2-4 options, shown as ``A) ...``, ``B) ...``; the Discrete action is the
option's index (``Discrete(MAX_OPTIONS)``, ``action_mask`` marks the options the question has).

Text replies (``actions="text"``) are parsed strictly: the option's letter alone, in either case,
optionally in parentheses or followed by ``)`` or ``.`` (``"B"``, ``"(b)"``, ``"B."``). Anything
else is ``invalid`` on single-decision tasks: scored as a wrong answer (reward 0) and flagged
``invalid_action`` in ``info``. On multi-turn dialogues, where the paper's answers are free text,
a reply that is not a letter is matched against the options' words by the rule judge
(``scoring.match_free_text``): it counts as the one option it names, or as wrong when it names
none or several (``judged`` outcome, not invalid).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from hear_gym.envs.ambiguity.items.model import MAX_OPTIONS

LETTERS = "ABCD"[:MAX_OPTIONS]
_LETTER_REPLY = re.compile(r"^\s*\(?\s*([A-Da-d])\s*[).]?\s*$")


@dataclass(frozen=True)
class Decision:
    """What one action decided: ``choice`` is an option index, or None (no option chosen);
    ``kind`` is ``option`` (a Discrete index or a letter), ``judged`` (free text the rule judge
    matched, or None when it named no single option) or ``invalid``; ``text`` the reply, if any."""

    choice: int | None
    kind: str
    text: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("option", "judged", "invalid"):
            raise ValueError(f"unknown decision kind {self.kind!r}")


def format_options(options: tuple[str, ...]) -> str:
    return "\n".join(f"{LETTERS[i]}) {option}" for i, option in enumerate(options))


def parse_reply(reply: str, n_options: int) -> int | None:
    """The option a letter reply names, or None when the reply is not exactly one letter in range."""
    match = _LETTER_REPLY.match(reply)
    if not match:
        return None
    index = LETTERS.index(match.group(1).upper())
    return index if index < n_options else None


def option_mask(n_options: int) -> np.ndarray:
    mask = np.zeros(MAX_OPTIONS, dtype=np.int8)
    mask[:n_options] = 1
    return mask


def replay_replies(record: dict) -> list[str]:
    """Each turn's reply as the agent wrote it, or (a Discrete run) the letter of its choice; a
    choice it did not make (None) as an empty reply, for ``hear-gym view``."""
    return [
        reply or ("" if choice is None else LETTERS[choice])
        for reply, choice in zip(record["replies"], record["choices"], strict=True)
    ]
