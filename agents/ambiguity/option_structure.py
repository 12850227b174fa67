"""An option-structure solver for the semantic items: it never reads what a meaning says, only
where each meaning recurs among the four options (which option shows it, first or second).

Each question's options become a pattern: the meanings numbered in order of first appearance,
option by option (``((0, 1), (1, 2), (3, 2), (0, 3))``). Fitted on the train split, the solver
answers a pattern with the gold position most often seen with it (an unseen pattern: option A).
A construction whose option structure depends on the gold lets it answer far above chance (1 in
4); ``tests/envs/ambiguity/test_ambiguity_semantic_options.py`` bounds it.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import Question, SemanticItem
from hear_gym.envs.ambiguity.items.semantic import JOIN


def pattern(question: Question, language: str) -> tuple[tuple[int, ...], ...]:
    separator = JOIN[language].format("", "")
    ids: dict[str, int] = {}
    return tuple(
        tuple(ids.setdefault(meaning, len(ids)) for meaning in option.split(separator))
        for option in question.options
    )


def _semantic(*splits: str) -> list[SemanticItem]:
    return [item for item in all_items() if isinstance(item, SemanticItem) and item.split in splits]


def held_out_accuracy(held_out: tuple[str, ...] = ("dev", "test")) -> tuple[float, int]:
    """(accuracy, items) of the solver fitted on the train split, on the held-out splits."""
    seen: dict[tuple, Counter] = defaultdict(Counter)
    for item in _semantic("train"):
        seen[pattern(item.question, item.language)][item.question.answer] += 1
    scored = _semantic(*held_out)
    right = 0
    for item in scored:
        golds = seen.get(pattern(item.question, item.language))
        guess = golds.most_common(1)[0][0] if golds else 0
        right += guess == item.question.answer
    return right / len(scored), len(scored)
