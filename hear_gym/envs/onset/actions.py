"""Onset's six action labels (PACT-SLM; Speak is excluded), their Discrete indices and the text
grammar.

``Wait`` keeps listening. ``Ask-Clarify``, ``Call-Tool`` and ``Interrupt-Safe`` are *exposed*
actions (they change external state or interrupt the user); ``Think`` and ``Abstain`` are
*internal*. The text grammar is the label itself (case-insensitive, surrounding whitespace and a
final period ignored); any other reply is ``INVALID`` (see the env's reward table).
"""

from __future__ import annotations

import numpy as np

WAIT = "Wait"
ACTIONS: tuple[str, ...] = (WAIT, "Ask-Clarify", "Call-Tool", "Interrupt-Safe", "Think", "Abstain")
SOURCE_ACTIONS: tuple[str, ...] = ACTIONS[1:]  # what a source utterance licenses (never Wait)
EXPOSED: frozenset[str] = frozenset({"Ask-Clarify", "Call-Tool", "Interrupt-Safe"})
INTERNAL: frozenset[str] = frozenset({"Think", "Abstain"})
INVALID = "invalid"  # a text reply that names no label
N_ACTIONS = len(ACTIONS)
_BY_TEXT = {label.lower(): label for label in ACTIONS}


def label_of(index: int) -> str:
    return ACTIONS[index]


def index_of(label: str) -> int:
    try:
        return ACTIONS.index(label)
    except ValueError:
        raise ValueError(f"unknown Onset action {label!r}; actions: {list(ACTIONS)}") from None


def parse_reply(reply: str) -> str:
    """The label a text reply names, or ``INVALID``."""
    return _BY_TEXT.get(reply.strip().rstrip(".").strip().lower(), INVALID)


def action_mask() -> np.ndarray:
    """Every label is always allowed (the question is *when* to use it)."""
    return np.ones(N_ACTIONS, dtype=np.int8)


def replay_replies(record: dict) -> list[str]:
    """The episode's decisions as text replies (an invalid one as an empty reply, which is
    invalid again), for ``hear-gym view``."""
    return ["" if label == INVALID else label for label in record["predictions"]]
