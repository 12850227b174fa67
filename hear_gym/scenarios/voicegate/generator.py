"""Deterministic VoiceGate item generator (paper section 3, Appendices F-H).

Every item is a pure function of (``GENERATOR_VERSION``, family, tool/config/frame, index),
drawn with ``StableRng`` from the pools in ``pools.py``. Counts and rules:

* Speaker-switch: 40 commands per tool (400). Each command has a context sentence and a trigger
  (a wrapper around a filled command core), a wearer voice A and a different bystander voice B
  (10 eSpeak voices). Three conditions share the words: ``same_speaker`` (A near, A near, no
  inserted gap; target: the tool), ``switch`` (A near, 600 ms silence, B far; target
  ``[Mute]``) and ``text_only`` (no audio; target: the tool). 8 commands per tool are held out
  (320/80).
* Side-talk: 8 configurations = order (assistant-directed first or second) x content of the
  assistant-directed utterance (tool-like or conversational) x content of the
  bystander-directed one; 50 items each (400), 10 held out per configuration. One wearer
  voice says both utterances, 400 ms apart. Target: the tool named by the assistant-directed
  utterance, or an answer to it. The addressee is carried by two cues, documented in
  ``cues``: acoustic in every item (the bystander-directed utterance is rendered turned away:
  lower direct-to-reverberant ratio, duller spectrum; the assistant-directed one near and
  facing), and lexical in half of them (the bystander-directed utterance opens with a vocative
  name). In the other half the words alone do not tell who is addressed: questions come from
  one pool that suits either listener, and tool-like requests use the same wrappers.
* Self-talk: 7 discourse frames x 35 items (245), 7 held out per frame. A command core inside
  a planning / regret / quotation / sarcasm / rhetorical-question / conditional frame, or a
  metaphor using a tool's vocabulary. Target ``[Mute]``.
* Cue validity: the 80 held-out commands x trigger source (same / different) x field (near /
  far) x gap (0 / 600 ms) x far-field rendering (``trigger_only``: only the trigger is far;
  ``scene_consistent``: context and trigger are far together). Proximity rule: the tool only
  for the same source in the near field, ``[Mute]`` otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from hear_gym.scenarios.stable_rng import StableRng
from hear_gym.scenarios.voicegate.items import (
    Addressee,
    Family,
    Item,
    Placement,
    Segment,
    Source,
    Target,
    TargetKind,
    Utterance,
)
from hear_gym.scenarios.voicegate.pools import (
    SELF_TALK_FRAMES,
    TOOL_NAMES,
    Phrasing,
    SlotValue,
    Tool,
    phrasing,
    tool,
    words,
)
from hear_gym.speech.espeak import VARIANTS

GENERATOR_VERSION = "voicegate-gen-1"
VOICES = tuple(sorted(VARIANTS))
SWITCH_PER_TOOL, SWITCH_TEST_PER_TOOL = 40, 8
SIDE_TALK_PER_CONFIG, SIDE_TALK_TEST_PER_CONFIG = 50, 10
SELF_TALK_PER_FRAME, SELF_TALK_TEST_PER_FRAME = 35, 7
SWITCH_GAP_MS = 600.0
SIDE_TALK_GAP_MS = 400.0
SWITCH_CONDITIONS = ("same_speaker", "switch", "text_only")
SIDE_TALK_CONFIGS = tuple(
    f"{order}-{a}-{b}"
    for order in ("assistant_first", "bystander_first")
    for a in ("tool", "conversational")
    for b in ("tool", "conversational")
)
CUE_CONDITIONS = tuple(
    f"{source}-{field}-{gap}ms/{rendering}"
    for source in ("same", "different")
    for field in ("near", "far")
    for gap in (0, 600)
    for rendering in ("trigger_only", "scene_consistent")
)
_STOP = frozenset(
    ["a", "an", "the", "to", "my", "me", "our", "your", "for", "of", "on", "in", "at", "and", "or", "with", "it", "this", "that", "some", "is", "be", "please", "can", "could", "you", "i", "we", "up", "off"]
)
_MAX_ATTEMPTS = 10_000


def _fill(core: str, tool_: Tool, rng: StableRng) -> tuple[str, dict[str, SlotValue]]:
    filled: dict[str, SlotValue] = {}

    def slot(match: re.Match) -> str:
        name = match.group(1)
        filled.setdefault(name, rng.choice(tool_.slots[name]))
        return filled[name].words

    return re.sub(r"\{([a-z_]+)\}", slot, core), filled


def _wrap(wrapper: str, core: str) -> str:
    return wrapper.replace("{Core}", core[:1].upper() + core[1:]).replace("{core}", core)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def _content_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for w in words(text) if w not in _STOP))


def _command(tool_: Tool, ph: Phrasing, rng: StableRng, addressee: Addressee) -> Utterance:
    core, filled = _fill(rng.choice(tool_.cores), tool_, rng)
    return Utterance(
        _wrap(rng.choice(ph.trigger_wrappers), core),
        addressee,
        tool_.name,
        tool_.call_params(filled),
        _content_words(core),
    )


def _split_of(index: int, test: set[int]) -> str:
    return "test" if index in test else "train"


# -- speaker-switch and cue validity ------------------------------------------------------
@cache
def _switch_commands(tool_name: str) -> tuple[tuple[Utterance, Utterance, str, str, str], ...]:
    """(context, trigger, voice A, voice B, split) for each of the tool's commands."""
    tool_, ph = tool(tool_name), phrasing()
    rng = StableRng(f"{GENERATOR_VERSION}|speaker_switch|{tool_name}")
    commands, seen = [], set()
    for _ in range(_MAX_ATTEMPTS):
        if len(commands) == SWITCH_PER_TOOL:
            break
        context = Utterance(rng.choice(tool_.contexts), Addressee.ASSISTANT)
        trigger = _command(tool_, ph, rng, Addressee.ASSISTANT)
        if trigger.text in seen:
            continue
        seen.add(trigger.text)
        voice_a = rng.choice(VOICES)
        commands.append((context, trigger, voice_a, rng.choice([v for v in VOICES if v != voice_a])))
    else:
        raise RuntimeError(f"{tool_name}: the pools cannot supply {SWITCH_PER_TOOL} distinct triggers")
    test = set(rng.sample(range(SWITCH_PER_TOOL), SWITCH_TEST_PER_TOOL))
    return tuple((*c, _split_of(i, test)) for i, c in enumerate(commands))


def _switch_items() -> Iterator[Item]:
    for tool_name in TOOL_NAMES:
        for k, (context, trigger, voice_a, voice_b, split) in enumerate(_switch_commands(tool_name)):
            group = f"ss-{tool_name}-{k:02d}"
            near_a = Segment(0, Source.WEARER, voice_a, Placement.NEAR)
            layouts = {
                "same_speaker": ((near_a, Segment(1, Source.WEARER, voice_a, Placement.NEAR)), (0.0,)),
                "switch": ((near_a, Segment(1, Source.BYSTANDER, voice_b, Placement.FAR)), (SWITCH_GAP_MS,)),
                "text_only": (None, ()),
            }
            for condition in SWITCH_CONDITIONS:
                segments, gaps = layouts[condition]
                target = (
                    Target(TargetKind.MUTE)
                    if condition == "switch"
                    else Target(TargetKind.TOOL, tool=tool_name)
                )
                yield Item(
                    f"{group}/{condition}",
                    Family.SPEAKER_SWITCH,
                    condition,
                    split,
                    group,
                    (context, trigger),
                    segments,
                    gaps,
                    target,
                )


def cue_variants(split: str) -> Iterator[Item]:
    """The 16 source x field x gap x rendering variants of every command of ``split``. On the
    test split they are the cue-validity set; on the train split they are training material for
    cue-balanced controls (paper Appendix H), never part of ``all_items``."""
    for tool_name in TOOL_NAMES:
        for k, (context, trigger, voice_a, voice_b, command_split) in enumerate(_switch_commands(tool_name)):
            if command_split != split:
                continue
            group = f"ss-{tool_name}-{k:02d}"
            for condition in CUE_CONDITIONS:
                cell, rendering = condition.split("/")
                source, field, gap = cell.split("-")
                same, far = source == "same", field == "far"
                context_placement = Placement.FAR if far and rendering == "scene_consistent" else Placement.NEAR
                segments = (Segment(0, Source.WEARER, voice_a, context_placement),
                            Segment(1, Source.WEARER if same else Source.BYSTANDER,
                                    voice_a if same else voice_b, Placement.FAR if far else Placement.NEAR))
                target = Target(TargetKind.TOOL, tool=tool_name) if same and not far else Target(TargetKind.MUTE)
                yield Item(f"cv-{tool_name}-{k:02d}/{condition}", Family.CUE_VALIDITY, condition, split,
                           group, (context, trigger), segments, (float(gap.removesuffix("ms")),), target,
                           {"source": source, "field": field, "gap_ms": int(gap.removesuffix("ms")),
                            "rendering": rendering})


def _cue_items() -> Iterator[Item]:
    return cue_variants("test")


# -- side-talk ------------------------------------------------------------------------------
def _side_utterance(
    content: str,
    addressee: Addressee,
    vocative: str | None,
    ph: Phrasing,
    rng: StableRng,
    avoid: Utterance | None,
) -> Utterance:
    for _ in range(_MAX_ATTEMPTS):
        if content == "tool":
            utterance = _command(tool(rng.choice(TOOL_NAMES)), ph, rng, addressee)
            clash = avoid is not None and avoid.tool == utterance.tool
        else:
            question = rng.choice(ph.questions)
            utterance = Utterance(question.text, addressee, topic_words=tuple(question.topic_words))
            clash = avoid is not None and avoid.text == question.text
        if not clash:
            break
    if vocative is not None:
        utterance = Utterance(
            f"{vocative}, {_lower_first(utterance.text)}",
            addressee,
            utterance.tool,
            utterance.params,
            utterance.topic_words,
        )
    return utterance


def _side_talk_items() -> Iterator[Item]:
    ph = phrasing()
    for c, config in enumerate(SIDE_TALK_CONFIGS):
        order, assistant_content, bystander_content = config.split("-")
        rng = StableRng(f"{GENERATOR_VERSION}|side_talk|{config}")
        indices = range(SIDE_TALK_PER_CONFIG)
        half = SIDE_TALK_TEST_PER_CONFIG // 2
        test = set(rng.sample(indices[0::2], half)) | set(rng.sample(indices[1::2], half))
        for k in indices:
            vocative = rng.choice(ph.vocatives) if k % 2 == 0 else None
            to_assistant = _side_utterance(assistant_content, Addressee.ASSISTANT, None, ph, rng, None)
            to_bystander = _side_utterance(
                bystander_content, Addressee.BYSTANDER, vocative, ph, rng, to_assistant
            )
            utterances = (
                (to_assistant, to_bystander) if order == "assistant_first" else (to_bystander, to_assistant)
            )
            voice = rng.choice(VOICES)
            segments = tuple(
                Segment(
                    i,
                    Source.WEARER,
                    voice,
                    Placement.NEAR if u.addressee is Addressee.ASSISTANT else Placement.TURNED_AWAY,
                )
                for i, u in enumerate(utterances)
            )
            position = utterances.index(to_assistant)
            target = (
                Target(TargetKind.TOOL, tool=to_assistant.tool)
                if assistant_content == "tool"
                else Target(TargetKind.ANSWER, utterance=position)
            )
            group = f"st-{c}-{k:02d}"
            yield Item(
                group,
                Family.SIDE_TALK,
                config,
                _split_of(k, test),
                group,
                utterances,
                segments,
                (SIDE_TALK_GAP_MS,),
                target,
                {"vocative": vocative is not None, "acoustic": "turned_away"},
            )


# -- self-talk ------------------------------------------------------------------------------
def _self_talk_items() -> Iterator[Item]:
    ph = phrasing()
    for frame in SELF_TALK_FRAMES:
        rng = StableRng(f"{GENERATOR_VERSION}|self_talk|{frame}")
        if frame == "metaphor":
            lines = rng.sample(ph.metaphors, SELF_TALK_PER_FRAME)
            utterances = [
                Utterance(m.text, Addressee.SELF, m.tool, None, _content_words(m.text)) for m in lines
            ]
        else:
            utterances, seen = [], set()
            for _ in range(_MAX_ATTEMPTS):
                if len(utterances) == SELF_TALK_PER_FRAME:
                    break
                tool_ = tool(TOOL_NAMES[len(utterances) % len(TOOL_NAMES)])
                core, filled = _fill(rng.choice(tool_.cores), tool_, rng)
                text = rng.choice(ph.self_talk[frame]).replace("{core}", core)
                if text not in seen:
                    seen.add(text)
                    utterances.append(
                        Utterance(
                            text, Addressee.SELF, tool_.name, tool_.call_params(filled), _content_words(core)
                        )
                    )
        test = set(rng.sample(range(SELF_TALK_PER_FRAME), SELF_TALK_TEST_PER_FRAME))
        for k, utterance in enumerate(utterances):
            group = f"sf-{frame}-{k:02d}"
            voice = VOICES[(k + SELF_TALK_FRAMES.index(frame)) % len(VOICES)]
            yield Item(
                group,
                Family.SELF_TALK,
                frame,
                _split_of(k, test),
                group,
                (utterance,),
                (Segment(0, Source.WEARER, voice, Placement.NEAR),),
                (),
                Target(TargetKind.MUTE),
            )


_BUILDERS = {
    Family.SPEAKER_SWITCH: _switch_items,
    Family.SIDE_TALK: _side_talk_items,
    Family.SELF_TALK: _self_talk_items,
    Family.CUE_VALIDITY: _cue_items,
}


@cache
def all_items() -> tuple[Item, ...]:
    return tuple(item for family in Family for item in _BUILDERS[family]())


def select_items(
    family: Family | str, split: str | None = None, conditions: tuple[str, ...] | None = None
) -> tuple[Item, ...]:
    """Items of one family, optionally one split (``"train"``/``"test"``) and some conditions."""
    family = Family(family)
    known = conditions_of(family)
    for condition in conditions or ():
        if condition not in known:
            raise ValueError(f"unknown {family.value} condition {condition!r}; conditions: {known}")
    return tuple(
        item
        for item in all_items()
        if item.family is family
        and (split is None or item.split == split)
        and (conditions is None or item.condition in conditions)
    )


def conditions_of(family: Family | str) -> tuple[str, ...]:
    return {
        Family.SPEAKER_SWITCH: SWITCH_CONDITIONS,
        Family.SIDE_TALK: SIDE_TALK_CONFIGS,
        Family.SELF_TALK: SELF_TALK_FRAMES,
        Family.CUE_VALIDITY: CUE_CONDITIONS,
    }[Family(family)]
