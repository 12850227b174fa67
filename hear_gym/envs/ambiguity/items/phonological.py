"""Phonological minimal pairs, written here from our own frames and word lists (the paper's
recordings are not available offline). Each frame yields candidate pairs; ``generator`` draws the
suite from them.

The paper's contrasts per language (Appendix A.1.1): English pause, stress, intonation and
heterograph; Mandarin pause, tone-only difference, heteronym and heterograph. A candidate is
``(interpretations, (written, marked reading) for reading a, ... for reading b)``; the marks are
``marks.reading``'s. For every contrast but heterographs the two readings have the same words; a
heterograph pair has the same *sound* and two spellings: both readings are rendered from one
``SpokenReading`` (the first spelling's, Mandarin with the shared syllables forced), so their
audio is identical and only the spelling in the transcript can decide.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from hear_gym.envs.ambiguity.items.marks import reading
from hear_gym.envs.ambiguity.items.model import Contrast, Utterance
from hear_gym.envs.ambiguity.spoken import SpokenReading

PROMPTS = {
    "en": "The speech may be ambiguous in how it is said. Which meaning does the speaker intend?",
    "zh": "这段话在语音上可能有歧义。说话人想表达的是哪个意思？",
}


@dataclass(frozen=True)
class PairDraft:
    key: str  # unique within its contrast and language
    interpretations: tuple[str, str]
    readings: tuple[Utterance, Utterance]


def _pair(key, meaning_a, meaning_b, written_a, spoken_a: SpokenReading, written_b, spoken_b) -> PairDraft:
    return PairDraft(
        key, (meaning_a, meaning_b), (Utterance(written_a, spoken_a), Utterance(written_b, spoken_b))
    )


# ---- English -------------------------------------------------------------------------------------
_NAMES = ("Grandma", "Grandpa", "Tom", "Anna", "Uncle Joe", "Lucy", "Dad", "Maria", "Sam", "Aunt Rose")
_ROLE_PAIRS = (
    ("teacher", "student"),
    ("manager", "intern"),
    ("coach", "player"),
    ("doctor", "nurse"),
    ("captain", "pilot"),
    ("chef", "waiter"),
    ("judge", "lawyer"),
    ("boss", "assistant"),
)
_VERDICTS = ("late", "wrong", "tired", "lazy")
_GROUPS = (("men", "women"), ("dogs", "cats"), ("teachers", "students"), ("doctors", "nurses"))
_AGES = ("old", "young", "tall", "sick")


def en_pause() -> Iterator[PairDraft]:
    for name in _NAMES:
        yield _pair(
            f"eat-{name}",
            f"the speaker invites {name} to eat",
            f"the speaker proposes eating {name}",
            f"Let's eat, {name}.",
            reading(f"Let's eat | {name}", "en"),
            f"Let's eat {name}.",
            reading(f"Let's eat {name}", "en"),
        )
    for (a, b), verdict in product(_ROLE_PAIRS, _VERDICTS):
        yield _pair(
            f"said-{a}-{b}-{verdict}",
            f"the {b} is {verdict}, according to the {a}",
            f"the {a} is {verdict}, according to the {b}",
            f"The {a} said the {b} is {verdict}.",
            reading(f"The {a} said the {b} is {verdict}", "en"),
            f"The {a}, said the {b}, is {verdict}.",
            reading(f"The {a} | said the {b} | is {verdict}", "en"),
        )
    for (a, b), age in product(_GROUPS, _AGES):
        yield _pair(
            f"group-{age}-{a}-{b}",
            f"only the {a} were {age}",
            f"both the {a} and the {b} were {age}",
            f"We helped {age} {a}, and {b}.",
            reading(f"We helped {age} {a} | and {b}", "en"),
            f"We helped {age} {a} and {b}.",
            reading(f"We helped {age} | {a} and {b}", "en"),
        )


# (modifier, noun, compound meaning: stress on the modifier, phrase meaning: stress on the noun)
_COMPOUNDS = (
    ("green", "house", "a glass building for growing plants", "a house painted green"),
    ("black", "board", "a board to write on with chalk", "any board that is black"),
    ("English", "teacher", "a teacher of the English language", "a teacher who comes from England"),
    ("French", "teacher", "a teacher of the French language", "a teacher who comes from France"),
    ("Spanish", "teacher", "a teacher of the Spanish language", "a teacher who comes from Spain"),
    ("moving", "van", "a van for moving furniture", "a van that is driving along"),
    ("dark", "room", "a room for developing photographs", "a room with no light"),
    ("black", "bird", "a blackbird, one species of bird", "any bird with black feathers"),
    ("hot", "dog", "a sausage in a bun", "a dog that feels hot"),
    ("dancing", "teacher", "a teacher who teaches dancing", "a teacher who is dancing"),
)
_FRAMES_NP = ("We looked at the {m} {n}", "I asked about the {m} {n}", "They found the {m} {n}")
_THEFT_NAMES = ("Tom", "Anna", "Peter", "Lucy", "Mark", "Nina", "Paul", "Rosa")
_THEFT_OBJECTS = ("money", "car", "bike", "phone", "keys", "book")


def en_stress() -> Iterator[PairDraft]:
    for (m, n, compound, phrase), frame in product(_COMPOUNDS, _FRAMES_NP):
        words = frame.format(m=m, n=n)
        yield _pair(
            f"{m}-{n}-{frame[:6]}",
            f"the {m} {n} is {compound}",
            f"the {m} {n} is {phrase}",
            f"{words}.",
            reading(frame.format(m=f"*{m}*", n=n), "en"),
            f"{words}.",
            reading(frame.format(m=m, n=f"*{n}*"), "en"),
        )
    for name, thing in product(_THEFT_NAMES, _THEFT_OBJECTS):
        words = f"I didn't say {name} took the {thing}"
        yield _pair(
            f"took-{name}-{thing}",
            f"someone other than {name} took the {thing}",
            f"{name} took something other than the {thing}",
            f"{words}.",
            reading(f"I didn't say *{name}* took the {thing}", "en"),
            f"{words}.",
            reading(f"I didn't say {name} took the *{thing}*", "en"),
        )


_STATEMENTS = (
    ("You're leaving tomorrow", "the listener is leaving tomorrow"),
    ("She got the job", "she got the job"),
    ("They sold the house", "they sold the house"),
    ("He's coming with us", "he is coming with them"),
    ("The shop is closed", "the shop is closed"),
    ("You finished the report", "the listener finished the report"),
    ("We're meeting at noon", "they are meeting at noon"),
    ("The train was late", "the train was late"),
    ("You called the bank", "the listener called the bank"),
    ("It's raining again", "it is raining again"),
    ("Your sister is here", "the listener's sister is here"),
    ("You like spicy food", "the listener likes spicy food"),
)
_CHOICES = (("tea", "coffee"), ("juice", "water"), ("rice", "noodles"), ("soup", "salad"), ("cake", "fruit"))


def en_intonation() -> Iterator[PairDraft]:
    for words, fact in _STATEMENTS:
        yield _pair(
            f"q-{words}",
            f"the speaker states that {fact}",
            f"the speaker asks whether {fact}",
            f"{words}.",
            reading(words, "en", "fall"),
            f"{words}?",
            reading(words, "en", "rise"),
        )
    for a, b in _CHOICES:
        words = f"Do you want {a} or {b}"
        yield _pair(
            f"or-{a}-{b}",
            f"the speaker asks which one of {a} and {b} the listener wants",
            f"the speaker asks whether the listener wants anything like {a} or {b} at all",
            f"{words}?",
            reading(words, "en", "fall"),
            f"{words}?",
            reading(words, "en", "rise"),
        )


# (frame with {w}, spelling a, spelling b, meaning a, meaning b)
_EN_HOMOPHONES = (
    ("We need more {w} for the party", "flour", "flower", "flour for baking", "flowers for decoration"),
    ("We watched the {w} rise over the hills", "sun", "son", "the sun coming up", "a boy standing up"),
    ("The {w} was very long", "tale", "tail", "a long story", "a long animal tail"),
    ("The {w} was quiet", "knight", "night", "a quiet armoured soldier", "a quiet time after dark"),
    ("The {w} was empty", "plane", "plain", "an empty aircraft", "an empty stretch of flat land"),
    ("Look at that {w} on the grass", "hare", "hair", "an animal like a rabbit", "a strand of hair"),
    ("Where is the {w}", "mail", "male", "the letters", "the male animal"),
    ("They need a new {w}", "sail", "sale", "a new sail for the boat", "a new discount sale"),
    ("I saw a {w} in the garden", "deer", "dear", "an animal with antlers", "a beloved person"),
    ("She bought a {w}", "pear", "pair", "a piece of fruit", "two matching things"),
    ("He could not {w} it", "bear", "bare", "stand or endure it", "uncover it"),
    ("The {w} is broken", "brake", "break", "the car's brake", "the rest period"),
)
_SPEAKERS = ("", "Mom says ", "I think ")


def en_heterograph() -> Iterator[PairDraft]:
    for (frame, a, b, meaning_a, meaning_b), lead in product(_EN_HOMOPHONES, _SPEAKERS):
        if lead:
            frame = frame[0].lower() + frame[1:]
        words_a, words_b = lead + frame.format(w=a), lead + frame.format(w=b)
        sound = reading(words_a, "en")  # one sound for both spellings: the same audio, bit for bit
        yield _pair(f"{a}-{b}-{lead}", meaning_a, meaning_b, f"{words_a}.", sound, f"{words_b}.", sound)


# ---- Mandarin ------------------------------------------------------------------------------------
# (marked a, marked b, written a, written b, meaning a, meaning b) with {x}/{y} slots
_ZH_PAUSE = (
    (
        "咬死了|{x}的狗",
        "咬死了{x}|的狗",
        "咬死了，{x}的狗",
        "咬死了{x}的狗",
        "{x}的狗被咬死了",
        "狗咬死了{x}",
    ),
    (
        "发现了|{x}的哨兵",
        "发现了{x}|的哨兵",
        "发现了，{x}的哨兵",
        "发现了{x}的哨兵",
        "{x}的哨兵被发现了",
        "哨兵发现了{x}",
    ),
    (
        "两个|{x}的老师",
        "两个{x}|的老师",
        "两个，{x}的老师",
        "两个{x}的老师",
        "同一个{x}的两位老师",
        "来自两个{x}的老师",
    ),
    (
        "关心|{x}的妈妈",
        "关心{x}|的妈妈",
        "关心，{x}的妈妈",
        "关心{x}的妈妈",
        "去关心{x}的妈妈",
        "一位关心{x}的妈妈",
    ),
    (
        "我们|三个人一组",
        "我们三个人|一组",
        "我们，三个人一组",
        "我们三个人一组",
        "每三个人分成一组",
        "我们这三个人是一组",
    ),
    ("我想|起来了", "我|想起来了", "我想，起来了", "我，想起来了", "我想要起床了", "我记起来了"),
)
_ZH_PAUSE_FILLERS = ("猎人", "邻居", "主人", "农民", "孩子", "老人", "学生", "司机")
_ZH_SCHOOLS = ("学校", "医院", "公司", "班级", "工厂", "村子")


def zh_pause() -> Iterator[PairDraft]:
    for marked_a, marked_b, written_a, written_b, meaning_a, meaning_b in _ZH_PAUSE:
        fillers = _ZH_SCHOOLS if "老师" in marked_a else _ZH_PAUSE_FILLERS if "{x}" in marked_a else ("",)
        for x in fillers:
            yield _pair(
                f"{marked_a}-{x}",
                meaning_a.format(x=x),
                meaning_b.format(x=x),
                written_a.format(x=x) + "。",
                reading(marked_a.format(x=x), "zh"),
                written_b.format(x=x) + "。",
                reading(marked_b.format(x=x), "zh"),
            )


# (frame with {s} subject and {t} the toned character, char, pinyin a, pinyin b, meaning a, meaning b)
_ZH_TONES = (
    ("{s}去{t}孩子", "看", "kan1", "kan4", "{s}去照看孩子", "{s}去探望孩子"),
    ("{s}在{t}门", "看", "kan1", "kan4", "{s}在守门", "{s}在望着门"),
    ("{s}在{t}书", "背", "bei4", "bei1", "{s}在背诵课文", "{s}用背驮着书"),
    ("{s}很{t}说话", "好", "hao3", "hao4", "{s}很容易商量", "{s}很喜欢说话"),
    ("{s}很{t}玩", "好", "hao3", "hao4", "{s}很有趣", "{s}很爱玩"),
    ("{s}的水{t}了", "倒", "dao3", "dao4", "{s}的水杯翻倒了", "{s}的水被倒出来了"),
)
# no two subjects sound alike (他 and 她 are both ta1): a reading's audio is in one split only
_ZH_SUBJECTS = ("他", "妹妹", "小明", "奶奶", "老王", "我弟弟")


def zh_tone() -> Iterator[PairDraft]:
    for (frame, char, tone_a, tone_b, meaning_a, meaning_b), s in product(_ZH_TONES, _ZH_SUBJECTS):
        words = frame.format(s=s, t=char)
        yield _pair(
            f"{frame}-{s}",
            meaning_a.format(s=s),
            meaning_b.format(s=s),
            words + "。",
            reading(frame.format(s=s, t=f"{char}[{tone_a}]"), "zh"),
            words + "。",
            reading(frame.format(s=s, t=f"{char}[{tone_b}]"), "zh"),
        )


_ZH_HETERONYMS = (
    ("{s}说这个很{t}宜", "便", "pian2", "bian4", "{s}说这个价格很低", "{s}说这个很方便"),
    ("{s}的头发{t}了", "长", "zhang3", "chang2", "{s}的头发长出来了", "{s}的头发太长了"),
    ("{s}喜欢{t}阳", "朝", "zhao1", "chao2", "{s}喜欢早晨的太阳", "{s}喜欢北京的朝阳区"),
    ("{s}是{t}夫", "大", "dai4", "da4", "{s}是医生", "{s}是古代的官员"),
    ("{s}{t}第一", "得", "de2", "dei3", "{s}拿了第一名", "{s}必须拿第一名"),
)


def zh_heteronym() -> Iterator[PairDraft]:
    for (frame, char, a, b, meaning_a, meaning_b), s in product(_ZH_HETERONYMS, _ZH_SUBJECTS):
        words = frame.format(s=s, t=char)
        yield _pair(
            f"{frame}-{s}",
            meaning_a.format(s=s),
            meaning_b.format(s=s),
            words + "。",
            reading(frame.format(s=s, t=f"{char}[{a}]"), "zh"),
            words + "。",
            reading(frame.format(s=s, t=f"{char}[{b}]"), "zh"),
        )


# (frame with {w}, spelling a, spelling b, shared pinyin of the differing characters, meanings)
_ZH_HOMOPHONES = (
    ("{w}是我的新同事", "他", "她", ("ta1",), "新同事是男的", "新同事是女的"),
    ("他们{w}同意", "全部", "全不", ("quan2", "bu4"), "所有人都同意", "所有人都不同意"),
    ("这种药{w}", "致癌", "治癌", ("zhi4", "ai2"), "这种药会引起癌症", "这种药能治疗癌症"),
    ("明天是{w}考试", "期中", "期终", ("qi1", "zhong1"), "明天是学期中间的考试", "明天是学期末的考试"),
    ("{s}有这个{w}", "权利", "权力", ("quan2", "li4"), "有这个权益", "有这种支配力量"),
    ("这件事没有{w}", "意义", "异议", ("yi4", "yi4"), "这件事没有价值", "大家对这件事没有反对意见"),
    ("我们到{w}了", "终点", "钟点", ("zhong1", "dian3"), "我们到达了终点", "我们约定的时间到了"),
)


def zh_heterograph() -> Iterator[PairDraft]:
    for (frame, a, b, pinyin, meaning_a, meaning_b), s in product(_ZH_HOMOPHONES, _ZH_SUBJECTS):
        if "{s}" not in frame and s != _ZH_SUBJECTS[0]:
            lead = s + "说"  # vary the frames without a subject slot by who reports them
        else:
            lead = ""
        words = [lead + frame.format(s=s, w=w) for w in (a, b)]
        marked = lead + frame.format(s=s, w="".join(f"{c}[{p}]" for c, p in zip(a, pinyin, strict=True)))
        sound = reading(marked, "zh")  # one sound for both spellings: the same audio, bit for bit
        yield _pair(f"{frame}-{a}-{s}", meaning_a, meaning_b, words[0] + "。", sound, words[1] + "。", sound)


DRAFTS = {
    ("en", Contrast.PAUSE): en_pause,
    ("en", Contrast.STRESS): en_stress,
    ("en", Contrast.INTONATION): en_intonation,
    ("en", Contrast.HETEROGRAPH): en_heterograph,
    ("zh", Contrast.PAUSE): zh_pause,
    ("zh", Contrast.TONE): zh_tone,
    ("zh", Contrast.HETERONYM): zh_heteronym,
    ("zh", Contrast.HETEROGRAPH): zh_heterograph,
}
