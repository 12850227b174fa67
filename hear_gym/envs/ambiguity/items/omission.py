"""Omission (ellipsis), written here in the spirit of the paper's sources (Appendix A.1.3):
English single sentences with an omitted verb phrase, verb or noun; Mandarin task-oriented
dialogue turns (1, 3 or 5 utterances, as in the paper's RiSAWOZ-based subset) whose last utterance
omits a subject or object named earlier.

A draft is ``(utterances with the omission, the complete last utterance, the omitted words, three
wrong candidates)``. Detection asks whether anything is omitted (its control plays the complete
version, gold "no"); completion asks which words were omitted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

DETECT_PROMPTS = {
    "en": "Is any word or phrase left out (omitted) in what the speaker said?",
    "zh": "说话人的话里有没有省略的成分？",
}
COMPLETE_PROMPTS = {
    "en": "Some words were left out of what the speaker said. Which words complete it?",
    "zh": "说话人的最后一句话省略了一些内容。省略的是什么？",
}
YES_NO = {"en": ("yes", "no"), "zh": ("有", "没有")}


@dataclass(frozen=True)
class OmissionDraft:
    key: str
    lines: tuple[str, ...]  # the last one has the omission
    complete: str  # the last line with the omitted words restored
    omitted: str
    wrong: tuple[str, str, str]


_EN_PEOPLE = (
    ("Anna", "she"),
    ("Tom", "he"),
    ("Lucy", "she"),
    ("Mark", "he"),
    ("Nina", "she"),
    ("Paul", "he"),
    ("Rosa", "she"),
    ("Sam", "he"),
)
_EN_VPS = (
    "go to the party",
    "finish the report",
    "fix the bike",
    "call her mother",
    "visit the museum",
    "bake a cake",
    "learn to swim",
    "buy the tickets",
)
_EN_VERBS = (
    ("ate", "apples", "pears"),
    ("bought", "shoes", "hats"),
    ("painted", "the door", "the fence"),
    ("washed", "the car", "the dog"),
)
_EN_OTHER_VERBS = ("sold", "hated", "borrowed", "threw")
_EN_NOUNS = ("car", "house", "jacket", "garden", "dog", "bike")


def en_drafts() -> Iterator[OmissionDraft]:
    for (name, pronoun), i in product(_EN_PEOPLE, range(len(_EN_VPS))):
        vp = _EN_VPS[i]
        wrong = tuple(_EN_VPS[(i + k) % len(_EN_VPS)] for k in (1, 3, 5))
        yield OmissionDraft(
            f"vp-{name}-{i}",
            (f"{name} wanted to {vp}, but {pronoun} couldn't.",),
            f"{name} wanted to {vp}, but {pronoun} couldn't {vp}.",
            vp,
            wrong,
        )
    for ((a, _), (b, _)), (verb, x, y) in product(product(_EN_PEOPLE[:4], _EN_PEOPLE[4:]), _EN_VERBS):
        wrong = tuple(v for v in _EN_OTHER_VERBS if v != verb)[:3]
        yield OmissionDraft(
            f"gap-{a}-{b}-{verb}",
            (f"{a} {verb} {x} and {b} {y}.",),
            f"{a} {verb} {x} and {b} {verb} {y}.",
            verb,
            wrong,
        )
    for (name, _), i in product(_EN_PEOPLE, range(len(_EN_NOUNS))):
        noun = _EN_NOUNS[i]
        wrong = tuple(_EN_NOUNS[(i + k) % len(_EN_NOUNS)] for k in (1, 2, 4))
        yield OmissionDraft(
            f"np-{name}-{noun}",
            (f"I like your {noun}, but I prefer {name}'s.",),
            f"I like your {noun}, but I prefer {name}'s {noun}.",
            noun,
            wrong,
        )


_ZH_RESTAURANTS = ("川菜馆", "火锅店", "面馆", "烤鸭店", "素食餐厅", "海鲜酒楼")
_ZH_HOTELS = ("如家酒店", "汉庭酒店", "锦江饭店", "希尔顿酒店", "七天酒店", "全季酒店")
_ZH_SPOTS = ("故宫", "颐和园", "天坛", "长城", "北海公园", "动物园")
_ZH_AREAS = ("朝阳区", "海淀区", "东城区", "西城区", "丰台区", "通州区")
_ZH_OBJECTS = (("书", "本"), ("苹果", "个"), ("衬衫", "件"), ("铅笔", "支"))


def _others(pool: tuple[str, ...], chosen: str, k: int = 3) -> tuple[str, ...]:
    i = pool.index(chosen)
    return tuple(pool[(i + j) % len(pool)] for j in range(1, k + 1))


def zh_drafts() -> Iterator[OmissionDraft]:
    for place, area in product(_ZH_RESTAURANTS, _ZH_AREAS):
        yield OmissionDraft(
            f"rest-{place}-{area}",
            (f"帮我在{area}找一家{place}。", f"好的，{area}有一家{place}。", "有停车位吗？"),
            f"那家{place}有停车位吗？",
            f"那家{place}",
            tuple(f"那家{p}" for p in _others(_ZH_RESTAURANTS, place)),
        )
    for hotel, area in product(_ZH_HOTELS, _ZH_AREAS):
        yield OmissionDraft(
            f"hotel-{hotel}-{area}",
            (f"订{area}的酒店。", f"{hotel}有空房。", f"订{hotel}吧。", "好的。", "几点入住？"),
            f"{hotel}几点入住？",
            hotel,
            _others(_ZH_HOTELS, hotel),
        )
    for spot, area in product(_ZH_SPOTS, _ZH_AREAS[:4]):
        yield OmissionDraft(
            f"spot-{spot}-{area}",
            (f"明天想去{spot}。", f"从{area}坐地铁去很方便。", "门票多少钱？"),
            f"{spot}的门票多少钱？",
            f"{spot}的",
            tuple(f"{s}的" for s in _others(_ZH_SPOTS, spot)),
        )
    for (thing, unit), (a, b) in product(_ZH_OBJECTS, (("两", "三"), ("四", "五"), ("一", "六"))):
        yield OmissionDraft(
            f"count-{thing}-{a}",
            (f"他买了{a}{unit}{thing}，我买了{b}{unit}。",),
            f"他买了{a}{unit}{thing}，我买了{b}{unit}{thing}。",
            thing,
            tuple(t for t, _ in _ZH_OBJECTS if t != thing),
        )


DRAFTS = {"en": en_drafts, "zh": zh_drafts}
