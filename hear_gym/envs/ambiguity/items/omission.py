"""Omission (ellipsis), written here in the spirit of the paper's sources (Appendix A.1.3):
English single sentences with an omitted verb phrase, verb or noun; Mandarin task-oriented
dialogue turns (1, 3 or 5 utterances, as in the paper's RiSAWOZ-based subset) whose last utterance
omits a subject or object named earlier.

A draft is ``(utterances with the omission, a last utterance without one, the omitted words, three
wrong candidates)``. Detection asks whether anything is omitted (its control plays the utterances
with that last one instead, gold "no"); completion asks which words were omitted. The control's
last utterance is drawn to be about as long as the omission's, longer or shorter
(``length_match``), so the clip's length does not tell them apart: the complete version, or the
same lead going on differently ("but she couldn't." / "but she panicked.").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.ambiguity.items.length_match import matched, spoken_length

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
    control_last: str  # a last line without an omission, about as long (``length_match``)
    omitted: str
    wrong: tuple[str, str, str]


def _en_size(text: str) -> int:
    """Words first, then letters: an English control has the item's word count where it can."""
    return 100 * len(text.split()) + spoken_length(text)


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
# how the clause after "but she" ends: (leaving the verb phrase out, saying something else of as
# many words a little shorter, ... a little longer), as eSpeak says them in the suite's frames
_EN_VP_ENDINGS = (
    ("couldn't", "slept", "panicked"),
    ("could not", "got sick", "was away"),
    ("never got to", "had a cold", "got very sick"),
    ("wasn't able to", "was too busy", "was too tired"),
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
        key = f"vp-{name}-{i}"
        rng = StableRng(f"ambiguity/length-match/{key}")
        elliptic, *complete_endings = rng.choice(_EN_VP_ENDINGS)
        complete = rng.choice(complete_endings)
        lead = f"{name} wanted to {vp}, but {pronoun}"
        yield OmissionDraft(key, (f"{lead} {elliptic}.",), f"{lead} {complete}.", vp, wrong)
    for ((a, _), (b, _)), (verb, x, y) in product(product(_EN_PEOPLE[:4], _EN_PEOPLE[4:]), _EN_VERBS):
        wrong = tuple(v for v in _EN_OTHER_VERBS if v != verb)[:3]
        key = f"gap-{a}-{b}-{verb}"
        other = wrong[0]
        # the same time adverbs on both sides: only whether the verb is said again differs
        gapped = tuple(f"{a} {verb} {x}{when} and {b} {y}." for when in ("", " yesterday", " on Monday"))
        whole = (
            *(f"{a} {verb} {x} with {b}{when}." for when in ("", " yesterday", " on Monday")),
            *(f"{a} and {b} {verb} {x}{when}." for when in ("", " yesterday")),
            f"{a} {verb} {x} and {b} {other} {y}.",
            f"{a} {verb} {x} on Monday and {b} {other} {y}.",
            f"{a} {verb} {x} yesterday and {b} {verb} {y}.",
        )
        elliptic, complete = matched(key, gapped, whole, _en_size)
        yield OmissionDraft(key, (elliptic,), complete, verb, wrong)
    for (name, _), i in product(_EN_PEOPLE, range(len(_EN_NOUNS))):
        noun = _EN_NOUNS[i]
        wrong = tuple(_EN_NOUNS[(i + k) % len(_EN_NOUNS)] for k in (1, 2, 4))
        key = f"np-{name}-{noun}"
        lead = f"I like your {noun}, but"
        elliptic, complete = matched(
            key,
            (f"{lead} I prefer {name}'s.", f"{lead} I really prefer {name}'s."),
            (
                f"{lead} I prefer {name}'s {noun}.",
                f"{lead} I really prefer {name}'s {noun}.",
                *(
                    f"{lead} {name}{really} {verb} it."
                    for really in ("", " really")
                    for verb in ("hates", "dislikes")
                ),
                f"{lead} it's old.",
            ),
            _en_size,
        )
        yield OmissionDraft(key, (elliptic,), complete, noun, wrong)


_ZH_RESTAURANTS = ("川菜馆", "火锅店", "面馆", "烤鸭店", "素食餐厅", "海鲜酒楼")
_ZH_HOTELS = ("如家酒店", "汉庭酒店", "锦江饭店", "希尔顿酒店", "七天酒店", "全季酒店")
_ZH_SPOTS = ("故宫", "颐和园", "天坛", "长城", "北海公园", "动物园")
_ZH_AREAS = ("朝阳区", "海淀区", "东城区", "西城区", "丰台区", "通州区")
_ZH_OBJECTS = (("书", "本"), ("苹果", "个"), ("衬衫", "件"), ("铅笔", "支"))


def _others(pool: tuple[str, ...], chosen: str, k: int = 3) -> tuple[str, ...]:
    i = pool.index(chosen)
    return tuple(pool[(i + j) % len(pool)] for j in range(1, k + 1))


def zh_drafts() -> Iterator[OmissionDraft]:
    # short lines: eSpeak says about 3.4 syllables a second, and a whole dialogue turn (its
    # utterances and the gaps between them) must fit the 12 s audio buffer in every voice
    for place, area in product(_ZH_RESTAURANTS, _ZH_AREAS):
        key = f"rest-{place}-{area}"
        elliptic, complete = matched(
            key,
            ("有停车位吗？", "请问有停车位吗？", "请问一下有停车位吗？", "请问晚上有没有停车位？"),
            (f"{place}有停车位吗？", f"那家{place}有停车位吗？", f"请问{place}有停车位吗？"),
        )
        yield OmissionDraft(
            key,
            (f"帮我在{area}找一家{place}。", f"好的，有一家{place}。", elliptic),
            complete,
            f"那家{place}",
            tuple(f"那家{p}" for p in _others(_ZH_RESTAURANTS, place)),
        )
    for hotel, area in product(_ZH_HOTELS, _ZH_AREAS):
        key = f"hotel-{hotel}-{area}"
        elliptic, complete = matched(
            key,
            ("几点入住？", "请问几点入住？", "请问最早几点入住？", "请问最早几点可以入住？"),
            (f"{hotel}几点入住？", f"{hotel}最早几点入住？"),
        )
        yield OmissionDraft(
            key,
            (f"订{area}的酒店。", f"{hotel}有空房。", "就订这家吧。", "好的。", elliptic),
            complete,
            hotel,
            _others(_ZH_HOTELS, hotel),
        )
    for spot, area in product(_ZH_SPOTS, _ZH_AREAS[:4]):
        key = f"spot-{spot}-{area}"
        elliptic, complete = matched(
            key,
            ("门票多少钱？", "请问门票多少钱？", "请问一张门票多少钱？", "请问一下一张门票要多少钱？"),
            (f"{spot}的门票多少钱？", f"{spot}门票多少钱？", f"请问{spot}的门票多少钱？"),
        )
        yield OmissionDraft(
            key,
            (f"明天想去{spot}。", f"从{area}坐地铁去很方便。", elliptic),
            complete,
            f"{spot}的",
            tuple(f"{s}的" for s in _others(_ZH_SPOTS, spot)),
        )
    for (thing, unit), (a, b) in product(_ZH_OBJECTS, (("两", "三"), ("四", "五"), ("一", "六"))):
        key = f"count-{thing}-{a}"
        # the same adverbs on both sides: only whether the object is said again differs
        leads = (f"他买了{a}{unit}{thing}，我", f"他昨天买了{a}{unit}{thing}，我")
        elliptic, complete = matched(
            key,
            tuple(f"{lead}{also}买了{b}{unit}。" for lead in leads for also in ("", "只")),
            tuple(f"{lead}{also}买了{b}{unit}{thing}。" for lead in leads for also in ("", "只")),
        )
        yield OmissionDraft(key, (elliptic,), complete, thing, tuple(t for t, _ in _ZH_OBJECTS if t != thing))


DRAFTS = {"en": en_drafts, "zh": zh_drafts}
