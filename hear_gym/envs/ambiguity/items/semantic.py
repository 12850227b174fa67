"""Semantic ambiguity (lexical and syntactic), written here in the spirit of the paper's sources
(Appendix A.1.2): English polysemy and part of speech (lexical), attachment, modification scope and
pronoun reference (syntactic); Mandarin polysemy and part of speech (lexical), modification scope,
subject-object relations and pronoun reference (syntactic).

A frame is ``(sentence, meaning 1, meaning 2, wrong 1, wrong 2)`` with ``{s}`` (a subject) or
``{a}``/``{b}`` (two people) slots. The paper asks for the sentence's readings; here the question
offers four pairs of meanings and the gold is the pair of the two readings the sentence has (each
wrong pair has a meaning it cannot have), so an answer is scored exactly. The four pairs are the
edges of one cycle over the four meanings, each shown in a drawn order (``option_pairs``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import permutations, product

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.ambiguity.items.model import Contrast

PROMPTS = {
    "en": "The meaning of this sentence is unclear. Which two meanings can it have?",
    "zh": "这句话的意思不明确。它可以有哪两种意思？",
}
JOIN = {"en": "{} / {}", "zh": "{}／{}"}

_EN_SUBJECTS = ("She", "He", "My brother", "Our neighbour", "Linda", "The old man")
_EN_LEXICAL = (
    (
        "{s} went to the bank",
        "went to a river's edge",
        "went to a place that keeps money",
        "went to a bakery",
        "went to a hospital",
    ),
    ("{s} saw a bat", "saw a flying animal", "saw a club used in sports", "saw a large bird", "saw a hat"),
    (
        "{s} exchanged addresses in darkness",
        "swapped addresses with no light",
        "swapped addresses in secret",
        "swapped addresses in a storm",
        "swapped addresses loudly",
    ),
    (
        "{s} is looking for a match",
        "is looking for a stick to light a fire",
        "is looking for a suitable partner",
        "is looking for a lost shoe",
        "is looking for a new job",
    ),
    (
        "{s} needs a new pitcher",
        "needs a jug for pouring",
        "needs a player who throws the ball",
        "needs a new painting",
        "needs a new coat",
    ),
    (
        "{s} can't bear children",
        "cannot stand children",
        "cannot give birth to children",
        "cannot find children",
        "cannot teach children",
    ),
    (
        "{s} saw her duck",
        "saw the bird that belongs to her",
        "saw her lower her head quickly",
        "saw her cook dinner",
        "saw her run away",
    ),
    (
        "{s} wants the light jacket",
        "wants the pale-coloured jacket",
        "wants the jacket that weighs little",
        "wants the expensive jacket",
        "wants the winter jacket",
    ),
    (
        "{s} left the note on the piano",
        "left a written message on the piano",
        "played a musical note and walked away",
        "hid money in the piano",
        "broke the piano",
    ),
)
_EN_TOOLS = ("telescope", "binoculars", "camera", "umbrella")
_EN_SYNTACTIC = (
    (
        "{s} saw the man with the {t}",
        "used the {t} to see the man",
        "saw a man who had the {t}",
        "gave the man the {t}",
        "lost the {t} near the man",
    ),
    (
        "{s} hit the thief with the {t}",
        "used the {t} to hit the thief",
        "hit the thief who carried the {t}",
        "gave the thief the {t}",
        "sold the {t} to the thief",
    ),
)
_EN_SCOPE = (
    (
        "Flying {t} can be dangerous",
        "the act of flying {t}",
        "{t} that are in the air",
        "building {t}",
        "selling {t}",
    ),
    (
        "Visiting {t} can be boring",
        "going to visit {t}",
        "{t} who come to visit",
        "phoning {t}",
        "writing to {t}",
    ),
    (
        "The {t} is ready to eat",
        "the {t} is hungry",
        "the {t} is cooked and can be eaten",
        "the {t} is asleep",
        "the {t} is sold out",
    ),
)
_EN_SCOPE_FILLERS = {
    "Flying": ("planes", "kites", "drones"),
    "Visiting": ("relatives", "cousins", "neighbours"),
    "The": ("chicken", "fish", "lamb"),
}
_EN_PAIRS = tuple(permutations(("Anna", "Maria", "Lucy", "Emma"), 2))
_EN_PRONOUN = (
    ("{a} told {b} that she had won", "{a} had won", "{b} had won", "nobody had won", "both had lost"),
    (
        "{a} met {b} after she finished work",
        "{a} finished work first",
        "{b} finished work first",
        "neither went to work",
        "they worked together all day",
    ),
)


@dataclass(frozen=True)
class SemanticDraft:
    key: str
    sentence: str
    meanings: tuple[str, str]
    wrong: tuple[str, str]


def _draft(frame, fill: dict[str, str], *texts: str) -> SemanticDraft:
    sentence, m1, m2, w1, w2 = (t.format(**fill) for t in (frame, *texts))
    key = "-".join([frame[:16], *fill.values()])
    return SemanticDraft(key, sentence, (m1, m2), (w1, w2))


def en_lexical() -> Iterator[SemanticDraft]:
    for (frame, *meanings), s in product(_EN_LEXICAL, _EN_SUBJECTS):
        yield _draft(frame, {"s": s}, *meanings)


def en_syntactic() -> Iterator[SemanticDraft]:
    for (frame, *meanings), s, t in product(_EN_SYNTACTIC, _EN_SUBJECTS, _EN_TOOLS):
        yield _draft(frame, {"s": s, "t": t}, *meanings)
    for frame, *meanings in _EN_SCOPE:
        for t in _EN_SCOPE_FILLERS[frame.split()[0]]:
            yield _draft(frame, {"t": t}, *meanings)
    for (frame, *meanings), (a, b) in product(_EN_PRONOUN, _EN_PAIRS):
        yield _draft(frame, {"a": a, "b": b}, *meanings)


_ZH_NAMES = ("小王", "小李", "小张", "老陈", "小刘", "老赵", "王老师", "李阿姨")
_ZH_PEOPLE = tuple(permutations(_ZH_NAMES, 2))
_ZH_LEXICAL = (
    ("{a}借了{b}一本书", "{a}向{b}借来一本书", "{a}把一本书借给了{b}", "{a}卖给{b}一本书", "{b}写了一本书"),
    (
        "{a}租了{b}一套房子",
        "{a}向{b}租来一套房子",
        "{a}把一套房子租给了{b}",
        "{a}买了{b}的房子",
        "{b}拆了一套房子",
    ),
    ("{a}上课了", "{a}开始讲课了", "{a}开始听课了", "{a}下课了", "{a}请假了"),
    (
        "{a}走了一个小时了",
        "{a}已经离开一个小时了",
        "{a}已经步行了一个小时",
        "{a}睡了一个小时",
        "{a}等了一个小时",
    ),
    ("{a}要学习文件", "{a}要学习这些文件的内容", "{a}要一些关于学习的文件", "{a}要烧掉文件", "{a}要打印照片"),
    ("{a}想要进口设备", "{a}想从国外进口设备", "{a}想要一些进口的设备", "{a}想出口设备", "{a}想修理旧设备"),
)
_ZH_SYNTACTIC = (
    ("{a}谁都不认识", "{a}不认识任何人", "没有人认识{a}", "{a}认识所有人", "大家都是{a}的朋友"),
    (
        "开刀的是{a}的父亲",
        "{a}的父亲是做手术的医生",
        "{a}的父亲是接受手术的病人",
        "{a}的父亲是护士",
        "{a}的父亲在卖刀",
    ),
    (
        "{a}和{b}的妈妈来了",
        "{a}本人和{b}的妈妈来了",
        "{a}和{b}两个人的妈妈来了",
        "{a}和{b}都没有来",
        "只有{b}来了",
    ),
    ("{a}对{b}说他明天要走", "{a}明天要走", "{b}明天要走", "他们明天都不走", "{a}今天已经走了"),
    ("{a}要炒鸡蛋", "{a}想吃一盘炒鸡蛋", "{a}要亲自去炒鸡蛋", "{a}要煮面条", "{a}要买鸭蛋"),
    ("{a}看见{b}的时候很紧张", "{a}很紧张", "{b}很紧张", "{a}和{b}都睡着了", "{a}没有看见{b}"),
)
_ZH_ANIMALS = (("{t}不吃了", "{t}不肯吃东西了", "我们不吃{t}了", "{t}饿死了", "{t}跑了"),)


def _zh_people(frames) -> Iterator[SemanticDraft]:
    """Each frame with every ordered pair of names (two slots) or every name (one slot)."""
    for frame, *meanings in frames:
        fills = [{"a": a, "b": b} for a, b in _ZH_PEOPLE] if "{b}" in frame else [{"a": a} for a in _ZH_NAMES]
        for fill in fills:
            yield _draft(frame, fill, *meanings)


def zh_lexical() -> Iterator[SemanticDraft]:
    yield from _zh_people(_ZH_LEXICAL)


def zh_syntactic() -> Iterator[SemanticDraft]:
    yield from _zh_people(_ZH_SYNTACTIC)
    for (frame, *meanings), t in product(_ZH_ANIMALS, ("鸡", "鱼", "鸭子", "兔子")):
        yield _draft(frame, {"t": t}, *meanings)


DRAFTS = {
    ("en", Contrast.LEXICAL): en_lexical,
    ("en", Contrast.SYNTACTIC): en_syntactic,
    ("zh", Contrast.LEXICAL): zh_lexical,
    ("zh", Contrast.SYNTACTIC): zh_syntactic,
}


def option_pairs(draft: SemanticDraft, rng: StableRng) -> tuple[tuple[str, str], ...]:
    """The four candidate pairs, the gold first. They are the edges of a cycle over the four
    meanings (m1-m2-w2-w1-m1): every meaning is in two options, and which one is shown first in
    each option is drawn, so the options' structure (which meaning recurs where) is the same
    whatever the gold; only what the meanings say decides."""
    (m1, m2), (w1, w2) = draft.meanings, draft.wrong
    cycle = ((m1, m2), (m2, w2), (w2, w1), (w1, m1))
    return tuple(pair if rng.below(2) == 0 else pair[::-1] for pair in cycle)
