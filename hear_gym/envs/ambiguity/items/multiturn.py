"""Multi-turn interaction, written here in the spirit of the paper's sources (Appendix A.1.5:
DailyDialog for English, CrossWOZ for Mandarin): a dialogue whose first user turn asks a question
its own facts decide, then turns with other questions, then the first question again. The paper's
English dialogues have up to 9 turns (6.21 on average), the Mandarin ones up to 16 (9.68); ours
have 4-9 and 6-14, drawn per item.

A question frame gives ``(turn text, options, gold index)`` from a ``StableRng``: the facts are
drawn, so which option is right varies from item to item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hear_gym.core.stable_rng import StableRng

TURNS = {"en": (4, 9), "zh": (6, 14)}
FIRST_AGAIN = {"en": "Back to my first question: {q}", "zh": "回到我的第一个问题：{q}"}
PROMPT = {"en": "Answer the user's question.", "zh": "请回答用户的问题。"}


@dataclass(frozen=True)
class Asked:
    facts: str  # what the user tells (part of the turn)
    question: str  # what the user asks
    options: tuple[str, str]
    answer: int


Frame = Callable[[StableRng], Asked]


def _ordered(rng: StableRng, right: str, wrong: str) -> tuple[tuple[str, str], int]:
    return ((right, wrong), 0) if rng.below(2) == 0 else ((wrong, right), 1)


def en_budget(rng: StableRng) -> Asked:
    things = rng.sample(("lamp", "chair", "rug", "kettle", "backpack", "jacket", "speaker"), 2)
    budget = 20 * (2 + rng.below(8))
    cheap, dear = budget - 5 * (1 + rng.below(3)), budget + 5 * (1 + rng.below(3))
    (first, second), answer = _ordered(rng, things[0], things[1])
    prices = {things[0]: cheap, things[1]: dear}
    return Asked(
        f"I have {budget} dollars. The {first} costs {prices[first]} dollars and the {second} costs {prices[second]} dollars.",
        "Which one can I afford?",
        (f"the {first}", f"the {second}"),
        answer,
    )


def en_bus(rng: StableRng) -> Asked:
    buses = rng.sample(("number 3", "number 7", "number 12", "number 21", "number 40"), 2)
    leave = 8 + rng.below(9)
    (first, second), answer = _ordered(rng, buses[0], buses[1])
    arrive = {buses[0]: f"{leave - 1}:30", buses[1]: f"{leave}:20"}
    return Asked(
        f"My train leaves at {leave}:00. The {first} bus gets to the station at {arrive[first]} and the {second} bus at {arrive[second]}.",
        "Which bus should I take?",
        (f"the {first} bus", f"the {second} bus"),
        answer,
    )


def en_allergy(rng: StableRng) -> Asked:
    allergen, bad, good = rng.choice(
        (
            ("nuts", "walnut cake", "fruit salad"),
            ("milk", "cheese pizza", "rice bowl"),
            ("eggs", "omelette", "noodle soup"),
        )
    )
    (first, second), answer = _ordered(rng, good, bad)
    return Asked(
        f"My sister can't eat {allergen}.",
        f"Should I bring her the {first} or the {second}?",
        (first, second),
        answer,
    )


def en_rain(rng: StableRng) -> Asked:
    days = rng.sample(("Saturday", "Sunday", "Friday", "Monday"), 2)
    (first, second), answer = _ordered(rng, days[1], days[0])
    return Asked(
        f"It will rain on {days[0]}.",
        f"Should we have the picnic on {first} or on {second}?",
        (first, second),
        answer,
    )


def en_quiet(rng: StableRng) -> Asked:
    quiet, loud = rng.choice((("library", "stadium"), ("park", "night club"), ("museum", "concert")))
    (first, second), answer = _ordered(rng, quiet, loud)
    return Asked(
        "I want somewhere quiet to read.",
        f"Should I go to the {first} or the {second}?",
        (first, second),
        answer,
    )


def zh_budget(rng: StableRng) -> Asked:
    hotels = rng.sample(("如家酒店", "汉庭酒店", "锦江饭店", "全季酒店", "七天酒店"), 2)
    budget = 100 * (2 + rng.below(6))
    prices = {hotels[0]: budget - 50, hotels[1]: budget + 50 * (1 + rng.below(2))}
    (first, second), answer = _ordered(rng, hotels[0], hotels[1])
    return Asked(
        f"预算一晚{budget}元。{first}{prices[first]}元，{second}{prices[second]}元。",
        "我住得起哪家？",
        (first, second),
        answer,
    )


def zh_subway(rng: StableRng) -> Asked:
    lines = rng.sample(("一号线", "二号线", "四号线", "十号线", "十三号线"), 2)
    leave = 8 + rng.below(9)
    arrive = {lines[0]: f"{leave - 1}点半", lines[1]: f"{leave}点二十"}
    (first, second), answer = _ordered(rng, lines[0], lines[1])
    return Asked(
        f"高铁{leave}点出发。{first}{arrive[first]}到站，{second}{arrive[second]}到。",
        "坐哪条线？",
        (first, second),
        answer,
    )


def zh_spicy(rng: StableRng) -> Asked:
    mild, hot = rng.choice((("清蒸鱼", "水煮鱼"), ("白切鸡", "辣子鸡"), ("番茄炒蛋", "麻婆豆腐")))
    (first, second), answer = _ordered(rng, mild, hot)
    return Asked("我不能吃辣。", f"{first}和{second}我该点哪个？", (first, second), answer)


def zh_rain(rng: StableRng) -> Asked:
    days = rng.sample(("周六", "周日", "周五", "周一"), 2)
    (first, second), answer = _ordered(rng, days[1], days[0])
    return Asked(f"{days[0]}会下雨。", f"我们{first}还是{second}去爬山？", (first, second), answer)


def zh_quiet(rng: StableRng) -> Asked:
    quiet, loud = rng.choice((("图书馆", "体育馆"), ("公园", "酒吧"), ("博物馆", "演唱会")))
    (first, second), answer = _ordered(rng, quiet, loud)
    return Asked("我想找个安静的地方看书。", f"去{first}还是{second}？", (first, second), answer)


OPENERS: dict[str, tuple[Frame, ...]] = {"en": (en_budget, en_bus), "zh": (zh_budget, zh_subway)}
MIDDLES: dict[str, tuple[Frame, ...]] = {
    "en": (en_allergy, en_rain, en_quiet, en_budget, en_bus),
    "zh": (zh_spicy, zh_rain, zh_quiet, zh_budget, zh_subway),
}


def dialogue(language: str, key: str) -> list[Asked]:
    """The dialogue's questions, the first repeated (without its facts) as the last."""
    rng = StableRng(f"ambiguity/multi_turn/{language}/{key}")
    low, high = TURNS[language]
    n_turns = low + rng.below(high - low + 1)
    opener = rng.choice(OPENERS[language])
    others = tuple(frame for frame in MIDDLES[language] if frame is not opener)  # one "first question"
    first = opener(rng)
    middles = [rng.choice(others)(rng) for _ in range(n_turns - 2)]
    again = Asked("", FIRST_AGAIN[language].format(q=first.question), first.options, first.answer)
    return [first, *middles, again]
