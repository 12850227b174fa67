"""Coreference, written here in the spirit of the paper's sources (Appendix A.1.4): English
Winograd-style sentences (one pronoun, two candidates of the same kind, a special word that flips
the referent; our own frames, not the Winograd Schema Challenge's), and Mandarin dialogue turns
whose pronoun 他 has two male candidates.

A frame is ``(sentence with {a} {b} {p} and a {w} slot, (word for a, word for b))``: filling
the slot with the first word makes ``{a}`` the referent, the second ``{b}``. Each filled frame is
used with one of its two words, drawn (twins would share their control). The control is the same
sentence with ``{p}`` filled by someone or something not mentioned before (``Jo``, ``the door``,
``妈妈``) instead of the pronoun: the detection control's "no", drawn to be about as long as the
item, longer or shorter (``length_match``), so the clip's length does not tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import permutations, product

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.ambiguity.items.length_match import matched, spoken_length

DETECT_PROMPTS = {
    "en": "Does a word in what the speaker said (such as a pronoun) refer back to someone or something mentioned before it?",
    "zh": "说话人的话里有没有代词指代前面提到的人或事物？",
}
RESOLVE_PROMPTS = {
    "en": 'Who or what does "{p}" refer to in what the speaker said?',
    "zh": "说话人话里的“{p}”指的是谁？",
}


@dataclass(frozen=True)
class CoreferenceDraft:
    key: str
    lines: tuple[str, ...]
    control: tuple[str, ...]
    pronoun: str
    candidates: tuple[str, str]
    referent: int  # index into candidates


_EN_PERSON_FRAMES = (
    ("{a} thanked {b} because {p} had {w} so much help.", ("received", "given")),
    ("{a} called {b} because {p} {w}.", ("wanted to talk", "had left a message")),
    ("{a} beat {b} at chess because {p} was the {w} player.", ("stronger", "weaker")),
    ("{a} lent money to {b} because {p} was {w}.", ("rich", "broke")),
    ("{a} apologized to {b} because {p} had been {w}.", ("rude", "hurt")),
    ("{a} asked {b} for directions because {p} {w}.", ("was lost", "knew the town well")),
    ("{a} waited for {b} because {p} was {w}.", ("early", "late")),
    ("{a} comforted {b} because {p} was {w}.", ("kind", "sad")),
    ("{a} gave {b} a ride because {p} {w}.", ("had a car", "had missed the bus")),
    ("{a} paid {b} because {p} {w}.", ("owed money", "had bought the tickets")),
)
# one-syllable names for the control that eSpeak says in about the time of "she" or "he" (measured
# in the suite's frames, about half longer and half shorter)
_EN_OTHERS = ("Lee", "Ray", "Eve", "Mo", "Ed", "Jo")
# (frame, the words for a and b, what fills {p}: with the pronoun, without a back-reference)
_EN_OBJECT_FRAMES = (
    (
        "The {a} doesn't fit in the {b} because {p} too {w}.",
        ("big", "small"),
        ("it is", "it's far", "it is far"),
        ("the door is", "the door's", "the door is far"),
    ),
    (
        "The {a} fell on the {b} and {p} {w}.",
        ("bounced off", "broke into pieces"),
        ("it", "then it"),
        ("Sam", "the cat", "then Sam", "then the cat"),
    ),
)
_EN_OBJECTS = (
    ("trophy", "suitcase"),
    ("guitar", "case"),
    ("book", "drawer"),
    ("table", "van"),
    ("bottle", "bag"),
    ("lamp", "box"),
    ("cake", "tin"),
    ("painting", "frame"),
)
_FEMALE = ("Anna", "Maria", "Lucy", "Emma", "Sara", "Nina", "Julia", "Rosa")
_MALE = ("Tom", "Peter", "Mark", "Paul", "John", "David", "Sam", "Ben")


def _flip(*key: object) -> int:
    """Which of a filled frame's two words it is used with (its referent)."""
    return StableRng("ambiguity/coreference/" + "-".join(map(str, key))).below(2)


def _fill(frame: str, a: str, b: str, p: str, w: str = "") -> str:
    text = frame.format(a=a, b=b, p=p, w=w)
    return text[0].upper() + text[1:]


def _en_size(text: str) -> int:
    """Words first, then letters: an English control has the item's word count where it can."""
    return 100 * len(text.split()) + spoken_length(text)


def en_drafts() -> Iterator[CoreferenceDraft]:
    people = [(a, b, "she") for a, b in permutations(_FEMALE, 2)] + [
        (a, b, "he") for a, b in permutations(_MALE, 2)
    ]
    for (frame, words), (a, b, p) in product(_EN_PERSON_FRAMES, people):
        referent = _flip(frame, a, b)
        key = f"{frame[:12]}-{a}-{b}-{referent}"
        other = StableRng(f"ambiguity/coreference-other/{key}").choice(_EN_OTHERS)
        yield CoreferenceDraft(
            key,
            (_fill(frame, a, b, p, words[referent]),),
            (_fill(frame, a, b, other, words[referent]),),
            p,
            (a, b),
            referent,
        )
    for (frame, words, with_it, without_it), (a, b) in product(_EN_OBJECT_FRAMES, _EN_OBJECTS):
        referent = _flip(frame, a, b)
        key = f"{frame[:12]}-{a}-{b}-{referent}"
        pronoun, other = matched(key, with_it, without_it, _en_size)
        yield CoreferenceDraft(
            key,
            (_fill(frame, a, b, pronoun, words[referent]),),
            (_fill(frame, a, b, other, words[referent]),),
            "it",
            (f"the {a}", f"the {b}"),
            referent,
        )


_ZH_MEN = ("小王", "小李", "小张", "老陈", "小刘", "老赵")
_ZH_FRAMES = (
    ("{a}给{b}打电话，因为{p}{w}。", ("想借钱", "留了言")),
    ("{a}向{b}道歉，因为{p}{w}。", ("说错了话", "很生气")),
    ("{a}下棋赢了{b}，因为{p}{w}。", ("更厉害", "太紧张了")),
    ("{a}把钱借给了{b}，因为{p}{w}。", ("很有钱", "没钱了")),
    ("{a}在门口等{b}，因为{p}{w}。", ("来早了", "迟到了")),
)
# the pronoun (one syllable, or three with 自己) against someone not mentioned before (two)
_ZH_PRONOUNS = ("他", "他自己")
_ZH_OTHERS = ("妈妈", "老师", "经理", "司机")
_ZH_LEADS = ("我们在找一家餐厅。", "今天的会开得很晚。")


def zh_drafts() -> Iterator[CoreferenceDraft]:
    for (frame, words), (a, b), lead in product(_ZH_FRAMES, permutations(_ZH_MEN[:4], 2), (None, *_ZH_LEADS)):
        referent = _flip(frame, a, b, lead)
        key = f"{frame[:6]}-{a}-{b}-{lead}-{referent}"
        pronoun, other = matched(key, _ZH_PRONOUNS, _ZH_OTHERS)
        context = () if lead is None else (lead,)  # 1- and 2-utterance turns, as dialogue excerpts
        yield CoreferenceDraft(
            key,
            (*context, frame.format(a=a, b=b, p=pronoun, w=words[referent])),
            (*context, frame.format(a=a, b=b, p=other, w=words[referent])),
            "他",
            (a, b),
            referent,
        )


DRAFTS = {"en": en_drafts, "zh": zh_drafts}
