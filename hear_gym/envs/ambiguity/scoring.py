"""Exact scoring of Ambiguity answers, and the offline rule that reads a free-text answer.

Every task here has a structured answer (the paper's reference answers are an interpretation, a
pair of meanings, yes/no, the omitted words, a referent, or the first answer again), so a chosen
option is right or wrong exactly. Free text (multi-turn replies) goes through
``match_free_text``: the reply counts as the option it names, when it names exactly one. The
``agents.ambiguity.judge`` module re-scores those replies with an LLM judge and reports agreement.

Rewards (``REWARDS``): +1 for the gold option, 0 for a wrong option, an unmatched free-text reply
or an invalid reply. A multi-turn dialogue pays only on its last turn (the repeated first
question, what the paper scores); earlier turns are recorded and reported, never rewarded.
"""

from __future__ import annotations

import re
import unicodedata

from hear_gym.envs.ambiguity.actions import Decision, parse_reply

REWARDS = {"correct": 1.0, "wrong": 0.0, "invalid": 0.0}


def _normalized(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"^(the|a|an)\s+", "", text.strip())
    return re.sub(r"\s+", " ", text)


def mentions(reply: str, option: str) -> bool:
    """Whether ``reply`` names ``option`` (case- and article-insensitive; whole words in English)."""
    needle, haystack = _normalized(option), _normalized(reply)
    if not needle:
        return False
    if needle.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", haystack) is not None
    return needle in haystack


def match_free_text(reply: str, options: tuple[str, ...]) -> int | None:
    """The option a free-text reply names: a letter reply's option, else the one option whose words
    it contains (None when it contains none or several)."""
    letter = parse_reply(reply, len(options))
    if letter is not None:
        return letter
    named = [i for i, option in enumerate(options) if mentions(reply, option)]
    return named[0] if len(named) == 1 else None


def is_correct(decision: Decision, answer: int) -> bool:
    return decision.kind != "invalid" and decision.choice == answer


def reward(decision: Decision, answer: int) -> float:
    if decision.kind == "invalid":
        return REWARDS["invalid"]
    return REWARDS["correct"] if is_correct(decision, answer) else REWARDS["wrong"]
