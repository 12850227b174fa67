"""Typed Ambiguity items (C3: *A Bilingual Benchmark for Spoken Dialogue Models Exploring Challenges
in Complex Conversations*, arXiv:2507.22968): what the user says, kept apart from what is asked and
from the hidden answer.

An item is one paper *instance*; it plays as one or more ``Episode``s (the env's unit):

* ``PhonologicalPair``: a minimal pair. Two readings of the same words that license two
  interpretations; each reading is one episode asking which interpretation the speaker meant.
* ``SemanticItem``: a lexically or syntactically ambiguous sentence; one episode asking which pair
  of meanings it can have.
* ``OmissionItem``: an utterance with an omitted word or phrase; episodes ``detect`` (is anything
  omitted? yes), ``detect-control`` (the complete utterance: no) and ``complete`` (which words
  were omitted?).
* ``CoreferenceItem``: a pronoun with two candidate referents (Winograd style); episodes
  ``detect`` (does a word refer back? yes), ``detect-control`` (a variant without back-reference:
  no) and ``resolve`` (which candidate?).
* ``MultiTurnItem``: a dialogue of user turns, each asking a question answered by what the user
  said; the last turn repeats the first question (the paper's multi-turn protocol).

``Utterance.written`` is what a careful transcriber writes (punctuation, spelling, characters);
``Utterance.spoken`` says how it is said (phonological items only; the others are read plainly).
``Question.answer`` is the hidden gold option; the env shows ``prompt`` and ``options`` only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import Enum

from hear_gym.envs.ambiguity.spoken import SpokenReading


class Phenomenon(str, Enum):
    PHONOLOGICAL = "phonological"
    SEMANTIC = "semantic"
    OMISSION = "omission"
    COREFERENCE = "coreference"
    MULTI_TURN = "multi_turn"


class Contrast(str, Enum):
    """The paper's subcategories (phonological contrasts, semantic kinds)."""

    PAUSE = "pause"
    STRESS = "stress"
    INTONATION = "intonation"
    TONE = "tone"  # Mandarin tone-only difference on the same characters
    HETEROGRAPH = "heterograph"  # same sound, different spelling: the audio cannot decide
    HETERONYM = "heteronym"  # same characters, different syllables
    LEXICAL = "lexical"
    SYNTACTIC = "syntactic"
    NONE = "none"  # omission, coreference, multi-turn


# contrasts whose two readings share their words and differ in how they are said
AUDIO_DECIDED = frozenset(
    {Contrast.PAUSE, Contrast.STRESS, Contrast.INTONATION, Contrast.TONE, Contrast.HETERONYM}
)

LANGUAGES: tuple[str, ...] = ("en", "zh")
SPLITS: tuple[str, ...] = ("train", "dev", "test")
MAX_OPTIONS = 4


def bare_words(written: str) -> str:
    """``written`` without punctuation (ASCII and CJK), case kept, spaces collapsed: what the
    ``T-nopunct`` condition and the ``A+T`` transcript show."""
    kept = "".join(" " if unicodedata.category(ch).startswith("P") and ch != "'" else ch for ch in written)
    return _CJK_GAP.sub("", re.sub(r"\s+", " ", kept)).strip()


_CJK_GAP = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")  # Mandarin has no word spaces


@dataclass(frozen=True)
class Utterance:
    written: str
    spoken: SpokenReading | None = None  # None: a plain reading of ``written``

    @property
    def bare(self) -> str:
        return bare_words(self.written)


@dataclass(frozen=True)
class Question:
    prompt: str
    options: tuple[str, ...]
    answer: int  # hidden: index of the gold option

    def __post_init__(self) -> None:
        if not 2 <= len(self.options) <= MAX_OPTIONS:
            raise ValueError(f"a question needs 2..{MAX_OPTIONS} options, got {len(self.options)}")
        if len(set(self.options)) != len(self.options):
            raise ValueError(f"repeated option in {self.options}")
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"answer {self.answer} outside the options")


@dataclass(frozen=True)
class Turn:
    """One user turn: what is said (one or more utterances, heard as one clip) and what is asked."""

    said: tuple[Utterance, ...]
    asked: Question


@dataclass(frozen=True)
class Episode:
    episode_id: str
    item_id: str  # the paper instance; the bootstrap resamples items
    phenomenon: Phenomenon
    contrast: Contrast
    task: str  # interpretation, explanation, detection, completion, resolution, recall
    language: str
    split: str
    turns: tuple[Turn, ...]
    control: bool = False  # a detection control (nothing omitted, nothing referred back)

    @property
    def row(self) -> str:
        """The table row this episode counts toward: ``phenomenon`` or ``phenomenon/task``."""
        if self.phenomenon in (Phenomenon.OMISSION, Phenomenon.COREFERENCE):
            return f"{self.phenomenon.value}/{self.task}"
        return self.phenomenon.value


@dataclass(frozen=True)
class PhonologicalPair:
    item_id: str
    language: str
    contrast: Contrast
    split: str
    prompt: str
    interpretations: tuple[str, str]
    readings: tuple[Utterance, Utterance]  # reading i licenses interpretation i

    def episodes(self) -> tuple[Episode, ...]:
        question = Question(self.prompt, self.interpretations, 0)
        return tuple(
            Episode(
                f"{self.item_id}/{side}",
                self.item_id,
                Phenomenon.PHONOLOGICAL,
                self.contrast,
                "interpretation",
                self.language,
                self.split,
                (Turn((reading,), Question(question.prompt, question.options, i)),),
            )
            for i, (side, reading) in enumerate(zip("ab", self.readings, strict=True))
        )


@dataclass(frozen=True)
class SemanticItem:
    item_id: str
    language: str
    contrast: Contrast
    split: str
    sentence: Utterance
    question: Question  # options: pairs of meanings; the gold pair is the two the sentence has

    def episodes(self) -> tuple[Episode, ...]:
        return (
            Episode(
                self.item_id,
                self.item_id,
                Phenomenon.SEMANTIC,
                self.contrast,
                "explanation",
                self.language,
                self.split,
                (Turn((self.sentence,), self.question),),
            ),
        )


@dataclass(frozen=True)
class DetectAndAnswer:
    """An omission or coreference instance: the utterances with the phenomenon, a control
    variant without it, the yes/no detection question and the content question."""

    item_id: str
    phenomenon: Phenomenon
    language: str
    split: str
    context: tuple[Utterance, ...]
    control: tuple[Utterance, ...]
    detect: Question  # options (yes, no); the gold is yes for ``context``
    answer_task: str  # completion or resolution
    content: Question

    def episodes(self) -> tuple[Episode, ...]:
        def episode(suffix: str, task: str, said, asked: Question, control: bool = False) -> Episode:
            return Episode(
                f"{self.item_id}/{suffix}",
                self.item_id,
                self.phenomenon,
                Contrast.NONE,
                task,
                self.language,
                self.split,
                (Turn(said, asked),),
                control,
            )

        no = Question(self.detect.prompt, self.detect.options, 1 - self.detect.answer)
        return (
            episode("detect", "detection", self.context, self.detect),
            episode("detect-control", "detection", self.control, no, control=True),
            episode(self.answer_task, self.answer_task, self.context, self.content),
        )


@dataclass(frozen=True)
class MultiTurnItem:
    item_id: str
    language: str
    split: str
    turns: tuple[Turn, ...]  # the last repeats the first question

    def episodes(self) -> tuple[Episode, ...]:
        return (
            Episode(
                self.item_id,
                self.item_id,
                Phenomenon.MULTI_TURN,
                Contrast.NONE,
                "recall",
                self.language,
                self.split,
                self.turns,
            ),
        )


Item = PhonologicalPair | SemanticItem | DetectAndAnswer | MultiTurnItem
