"""The Ambiguity suite, generated deterministically from the frames (``StableRng``: the same items
on every machine and library version).

Counts follow the paper's Table 1 (1,079 instances): the test split of every phenomenon x
language cell has exactly the paper's count; contrasts within a cell share it evenly (the paper
gives no finer counts). The dev split has a quarter of the test count and the train split up to
twice it, from the same frames with other fillers (no transcript is in two splits); a cell whose
frames run short has a smaller train split (``split_counts`` says what was built). Which draft
goes to which split is dealt by ``SPLIT_DEAL``, not by the version: a version that only rewords
drafts keeps every item's id and split.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.ambiguity.items import coreference, multiturn, omission, phonological, semantic
from hear_gym.envs.ambiguity.items.model import (
    SPLITS,
    Contrast,
    DetectAndAnswer,
    Episode,
    Item,
    MultiTurnItem,
    Phenomenon,
    PhonologicalPair,
    Question,
    SemanticItem,
    Turn,
    Utterance,
)

GENERATOR_VERSION = "ambiguity-items-3"
# the seed of the deal into splits: a version that rewords drafts keeps every item in its split
SPLIT_DEAL = "ambiguity-items-2"
# the paper's Table 1: instances per phenomenon and language
PAPER_COUNTS: dict[tuple[Phenomenon, str], int] = {
    (Phenomenon.PHONOLOGICAL, "zh"): 37,
    (Phenomenon.PHONOLOGICAL, "en"): 29,
    (Phenomenon.SEMANTIC, "zh"): 118,
    (Phenomenon.SEMANTIC, "en"): 51,
    (Phenomenon.OMISSION, "zh"): 70,
    (Phenomenon.OMISSION, "en"): 102,
    (Phenomenon.COREFERENCE, "zh"): 60,
    (Phenomenon.COREFERENCE, "en"): 540,
    (Phenomenon.MULTI_TURN, "zh"): 38,
    (Phenomenon.MULTI_TURN, "en"): 34,
}
CONTRASTS: dict[tuple[Phenomenon, str], tuple[Contrast, ...]] = {
    (Phenomenon.PHONOLOGICAL, "en"): (
        Contrast.PAUSE,
        Contrast.STRESS,
        Contrast.INTONATION,
        Contrast.HETEROGRAPH,
    ),
    (Phenomenon.PHONOLOGICAL, "zh"): (
        Contrast.PAUSE,
        Contrast.TONE,
        Contrast.HETERONYM,
        Contrast.HETEROGRAPH,
    ),
    (Phenomenon.SEMANTIC, "en"): (Contrast.LEXICAL, Contrast.SYNTACTIC),
    (Phenomenon.SEMANTIC, "zh"): (Contrast.LEXICAL, Contrast.SYNTACTIC),
}
TRAIN_FACTOR, DEV_FACTOR = 2.0, 0.25


def split_sizes(test: int) -> dict[str, int]:
    """Wanted items per split for a cell whose test split has ``test`` items."""
    return {"test": test, "dev": math.ceil(test * DEV_FACTOR), "train": int(test * TRAIN_FACTOR)}


def _shares(total: int, parts: int) -> list[int]:
    """``total`` split as evenly as possible over ``parts``, larger shares first."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def _assign(key: str, drafts: Sequence, test: int) -> Iterable[tuple[str, int, object]]:
    """(split, index within the split, draft): the drafts in a fixed shuffled order, test first."""
    sizes = split_sizes(test)
    if len(drafts) < sizes["test"] + sizes["dev"]:
        raise ValueError(f"{key}: {len(drafts)} drafts cannot fill test {sizes['test']} + dev {sizes['dev']}")
    order = StableRng(f"ambiguity/{SPLIT_DEAL}/{key}").shuffled(drafts)
    start = 0
    for split in ("test", "dev", "train"):
        for index, draft in enumerate(order[start : start + sizes[split]]):
            yield split, index, draft
        start += sizes[split]


def _shuffled_options(key: str, options: Sequence[str], gold: int) -> Question:
    """A question whose options come in an order fixed by ``key`` (the gold moves with them)."""
    order = StableRng(f"ambiguity/options/{key}").shuffled(range(len(options)))
    return Question("", tuple(options[i] for i in order), order.index(gold))


def _with_prompt(prompt: str, question: Question) -> Question:
    return Question(prompt, question.options, question.answer)


def _phonological(language: str, contrast: Contrast, test: int) -> Iterable[Item]:
    drafts = list(phonological.DRAFTS[(language, contrast)]())
    for split, i, draft in _assign(f"phonological/{language}/{contrast.value}", drafts, test):
        yield PhonologicalPair(
            f"phonological-{language}-{contrast.value}-{split}-{i:03d}",
            language,
            contrast,
            split,
            phonological.PROMPTS[language],
            draft.interpretations,
            draft.readings,
        )


def _semantic(language: str, contrast: Contrast, test: int) -> Iterable[Item]:
    drafts = list(semantic.DRAFTS[(language, contrast)]())
    join = semantic.JOIN[language]
    for split, i, draft in _assign(f"semantic/{language}/{contrast.value}", drafts, test):
        item_id = f"semantic-{language}-{contrast.value}-{split}-{i:03d}"
        pairs = semantic.option_pairs(draft, StableRng(f"ambiguity/semantic-pairs/{item_id}"))
        options = [join.format(*pair) for pair in pairs]
        question = _with_prompt(semantic.PROMPTS[language], _shuffled_options(item_id, options, 0))
        yield SemanticItem(item_id, language, contrast, split, Utterance(draft.sentence), question)


def _omission(language: str, test: int) -> Iterable[Item]:
    drafts = list(omission.DRAFTS[language]())
    for split, i, draft in _assign(f"omission/{language}", drafts, test):
        item_id = f"omission-{language}-{split}-{i:03d}"
        content = _shuffled_options(item_id, (draft.omitted, *draft.wrong), 0)
        yield DetectAndAnswer(
            item_id,
            Phenomenon.OMISSION,
            language,
            split,
            tuple(Utterance(line) for line in draft.lines),
            tuple(Utterance(line) for line in (*draft.lines[:-1], draft.control_last)),
            Question(omission.DETECT_PROMPTS[language], omission.YES_NO[language], 0),
            "completion",
            _with_prompt(omission.COMPLETE_PROMPTS[language], content),
        )


def _coreference(language: str, test: int) -> Iterable[Item]:
    drafts = list(coreference.DRAFTS[language]())
    for split, i, draft in _assign(f"coreference/{language}", drafts, test):
        prompt = coreference.RESOLVE_PROMPTS[language].format(p=draft.pronoun)
        yield DetectAndAnswer(
            f"coreference-{language}-{split}-{i:03d}",
            Phenomenon.COREFERENCE,
            language,
            split,
            tuple(Utterance(line) for line in draft.lines),
            tuple(Utterance(line) for line in draft.control),
            Question(coreference.DETECT_PROMPTS[language], omission.YES_NO[language], 0),
            "resolution",
            Question(prompt, draft.candidates, draft.referent),
        )


def _multi_turn(language: str, test: int) -> Iterable[Item]:
    sep = " " if language == "en" else ""
    prompt = multiturn.PROMPT[language]
    for split, size in split_sizes(test).items():
        for i in range(size):
            item_id = f"multi_turn-{language}-{split}-{i:03d}"
            turns = tuple(
                Turn(
                    (Utterance(sep.join(part for part in (asked.facts, asked.question) if part)),),
                    Question(prompt, asked.options, asked.answer),
                )
                for asked in multiturn.dialogue(language, f"{split}-{i}")
            )
            yield MultiTurnItem(item_id, language, split, turns)


_BUILDERS: dict[Phenomenon, Callable[[str, int], Iterable[Item]]] = {
    Phenomenon.OMISSION: _omission,
    Phenomenon.COREFERENCE: _coreference,
    Phenomenon.MULTI_TURN: _multi_turn,
}
_CONTRAST_BUILDERS = {Phenomenon.PHONOLOGICAL: _phonological, Phenomenon.SEMANTIC: _semantic}


@lru_cache(maxsize=1)
def all_items() -> tuple[Item, ...]:
    items: list[Item] = []
    for (phenomenon, language), count in PAPER_COUNTS.items():
        if phenomenon in _CONTRAST_BUILDERS:
            contrasts = CONTRASTS[(phenomenon, language)]
            for contrast, share in zip(contrasts, _shares(count, len(contrasts)), strict=True):
                items.extend(_CONTRAST_BUILDERS[phenomenon](language, contrast, share))
        else:
            items.extend(_BUILDERS[phenomenon](language, count))
    return tuple(items)


@lru_cache(maxsize=1)
def all_episodes() -> tuple[Episode, ...]:
    return tuple(episode for item in all_items() for episode in item.episodes())


@lru_cache(maxsize=1)
def episodes_by_id() -> dict[str, Episode]:
    return {episode.episode_id: episode for episode in all_episodes()}


@cache
def item_ids(split: str) -> tuple[str, ...]:
    """The episode ids of ``split`` (``"all"``: every split), in generation order."""
    if split != "all" and split not in SPLITS:
        raise ValueError(f"split must be one of {(*SPLITS, 'all')}, got {split!r}")
    return tuple(e.episode_id for e in all_episodes() if split == "all" or e.split == split)


def split_counts() -> dict[str, dict[str, int]]:
    """Items per split and ``phenomenon-language`` cell (what the docs' table reports)."""
    counts: dict[str, Counter] = {split: Counter() for split in SPLITS}
    for item in all_items():
        phenomenon = item.phenomenon if isinstance(item, DetectAndAnswer) else _phenomenon_of(item)
        counts[item.split][f"{phenomenon.value}-{item.language}"] += 1
    return {split: dict(sorted(c.items())) for split, c in counts.items()}


def _phenomenon_of(item: Item) -> Phenomenon:
    return {
        PhonologicalPair: Phenomenon.PHONOLOGICAL,
        SemanticItem: Phenomenon.SEMANTIC,
        MultiTurnItem: Phenomenon.MULTI_TURN,
    }[type(item)]
