"""Deterministic VoiceGate item generator (paper section 3, Appendices F-H).

Every item is a pure function of (``GENERATOR_VERSION``, family, tool/config/frame, index),
drawn with ``StableRng`` from the pools in ``pools.py``. Counts and rules:

* Voices (paper Appendix H: train and test wearer voices are disjoint): the 10 eSpeak voices
  are split by speaker, ``TRAIN_VOICES`` (f1 f3 f4 m1 m2 m4) and ``TEST_VOICES`` (f2 f5 m3 m7,
  two of each sex). Every voice of an item, wearer's and bystander's, comes from its split's
  set, so a held-out input holds no voice seen in training in any role; a gate cannot pass by
  remembering who the wearers were.
* Speaker-switch: 40 commands per tool (400). Each command has a context sentence and a trigger
  (a wrapper around a filled command core), a wearer voice A and a different bystander voice B.
  0 to 3 commas (``rules.SWITCH_COMMA_SHARES``: a discourse opener before the context, one before
  the trigger, a wrapper with a comma) give its clause pauses the spread of self-talk's and
  side-talk's, so the number of speech onsets does not tell the families apart.
  Three conditions share the words: ``same_speaker`` (A near, A near, no inserted gap; target:
  the tool), ``switch`` (A near, 600 ms gap, B far; target ``[Mute]``) and ``text_only`` (no
  audio; target: the tool). 8 commands per tool are held out (320/80).
* Side-talk: 8 configurations = order (assistant-directed first or second) x content of the
  assistant-directed utterance (tool-like or conversational) x content of the
  bystander-directed one. 395 items, as the paper retained: 49 per configuration plus one more
  in configurations 0, 3 and 5 (``SIDE_TALK_EXTRA``: assistant_first-tool-tool,
  assistant_first-conversational-conversational, bystander_first-tool-conversational), the
  choice that leaves every factor's two levels one item apart (198/197). 10 per configuration
  are held out (315/80). One wearer voice says both utterances, joined as a same-speaker
  command is (no inserted gap, see below), both near and facing the microphone (paper: two utterances by the same speaker; using one voice removes
  identity, and one placement removes acoustics, as an explanation: the task is pragmatic
  attribution). Target: the tool named by the assistant-directed utterance, or an answer to it.
  Every other item in generation order (198 of 395) carries a lexical cue, the
  bystander-directed utterance opening with a vocative name ("Sam, ..."); the
  assistant-directed one then opens with a discourse marker that suits either listener
  ("Okay, ..."), so that both carry an opener and its comma pause (without it, "the shorter
  segment" found the assistant in 8 of 10 vocative items). Held-out items are half with, half
  without. In the others the words alone do not tell who is addressed: questions come from one
  pool that suits either listener, and tool-like requests use the same wrappers.
  ``side_talk_cue="turned_away"`` adds the earlier acoustic cue (the bystander-directed
  utterance rendered turned away: lower direct-to-reverberant ratio, duller spectrum); it
  changes placements only, never words, voices or splits. ``cues`` records both.
* Self-talk: 7 discourse frames, 223 items as the paper retained: 32 per frame, 31 for the last
  frame (metaphor). 6 per frame held out (181/42). A command core inside a planning / regret /
  quotation / sarcasm / rhetorical-question / conditional frame, or a metaphor using a tool's
  vocabulary, is one sentence of a two-sentence monologue; the other, said before it (even
  items) or after it (odd items), is one of the tool's contexts or a self-directed aside
  ("Hmm.", "I keep forgetting things lately."), the one that brings the input's spoken length
  (``rules.spoken_length``: characters, a comma's pause as six) nearest a length drawn from the
  act inputs with audio of the same split (same-speaker and side-talk); in half the items whose
  frame holds a comma (``rules.COMPANION_COMMA_SHARE``) that sentence holds one too. Voices rotate through
  the split's set. Target ``[Mute]``.
* Utterances, pauses and length do not tell the families apart: every input with
  audio holds two utterances (the paper fixes two for side-talk and speaker-switch; a
  monologue admits a second sentence), joined with no inserted gap (``JOINED_GAP_MS``) except
  the switch's 600 ms, and the scene puts the speaker's own clause pause at every utterance
  boundary. Held out, no single scalar among duration, utterance count, speech stretches,
  longest pause and total energy tells self-talk from the act inputs, or side-talk from
  same-speaker commands, above 0.60 balanced accuracy
  (``tests/envs/voicegate/test_voicegate_shortcuts.py``). The switch keeps the paper's own gap
  confound.
* Held-out counts are round(n / 5) per tool, configuration or frame (about 80/20 item-level).
* Cue validity: the 80 held-out commands x trigger source (same / different) x field (near /
  far) x gap (0 / 600 ms) x far-field rendering (``trigger_only``: only the trigger is far;
  ``scene_consistent``: context and trigger are far together). Proximity rule: the tool only
  for the same source in the near field, ``[Mute]`` otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import cache

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.voicegate.items.model import (
    SPLITS,
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
from hear_gym.envs.voicegate.items.pools import SELF_TALK_FRAMES, TOOL_NAMES, phrasing, tool
from hear_gym.envs.voicegate.items.rules import (  # noqa: F401  (the construction's constants, re-exported)
    CUE_CONDITIONS,
    GENERATOR_VERSION,
    JOINED_GAP_MS,
    MAX_ATTEMPTS,
    SELF_TALK_ITEMS,
    SIDE_TALK_CONFIGS,
    SIDE_TALK_CUES,
    SIDE_TALK_EXTRA,
    SIDE_TALK_ITEMS,
    SPLIT_VOICES,
    SWITCH_COMMA_DRAW,
    SWITCH_CONDITIONS,
    SWITCH_GAP_MS,
    SWITCH_PER_TOOL,
    SWITCH_TEST_PER_TOOL,
    TEST_VOICES,
    TRAIN_VOICES,
    command,
    lower_first,
    split_of,
    spoken_length,
)
from hear_gym.envs.voicegate.items.talk_items import self_talk_items, side_talk_items


# -- speaker-switch and cue validity ------------------------------------------------------
@cache
def _switch_commands(tool_name: str) -> tuple[tuple[Utterance, Utterance, str, str, str], ...]:
    """(context, trigger, voice A, voice B, split) for each of the tool's commands."""
    tool_, ph = tool(tool_name), phrasing()
    rng = StableRng(f"{GENERATOR_VERSION}|speaker_switch|{tool_name}")
    test = set(rng.sample(range(SWITCH_PER_TOOL), SWITCH_TEST_PER_TOOL))
    commands, seen = [], set()
    for _ in range(MAX_ATTEMPTS):
        if len(commands) == SWITCH_PER_TOOL:
            break
        context_text = rng.choice(tool_.contexts)
        places = set(rng.sample(("context", "trigger", "wrapper"), rng.choice(SWITCH_COMMA_DRAW)))
        openers = rng.sample(ph.openers, 2)  # two, so that context and trigger never share one
        if "context" in places:
            context_text = f"{openers[0]}, {lower_first(context_text)}"
        context = Utterance(context_text, Addressee.ASSISTANT)
        trigger = command(tool_, ph, rng, Addressee.ASSISTANT, comma_wrapper="wrapper" in places)
        if "trigger" in places:
            trigger = replace(trigger, text=f"{openers[1]}, {lower_first(trigger.text)}")
        if trigger.text in seen:
            continue
        seen.add(trigger.text)
        split = split_of(len(commands), test)
        voices = SPLIT_VOICES[split]
        voice_a = rng.choice(voices)
        commands.append((context, trigger, voice_a, rng.choice([v for v in voices if v != voice_a]), split))
    else:
        raise RuntimeError(f"{tool_name}: the pools cannot supply {SWITCH_PER_TOOL} distinct triggers")
    return tuple(commands)


def _switch_items() -> Iterator[Item]:
    for tool_name in TOOL_NAMES:
        for k, (context, trigger, voice_a, voice_b, split) in enumerate(_switch_commands(tool_name)):
            group = f"ss-{tool_name}-{k:02d}"
            near_a = Segment(0, Source.WEARER, voice_a, Placement.NEAR)
            layouts = {
                "same_speaker": (
                    (near_a, Segment(1, Source.WEARER, voice_a, Placement.NEAR)),
                    (JOINED_GAP_MS,),
                ),
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
                context_placement = (
                    Placement.FAR if far and rendering == "scene_consistent" else Placement.NEAR
                )
                segments = (
                    Segment(0, Source.WEARER, voice_a, context_placement),
                    Segment(
                        1,
                        Source.WEARER if same else Source.BYSTANDER,
                        voice_a if same else voice_b,
                        Placement.FAR if far else Placement.NEAR,
                    ),
                )
                target = (
                    Target(TargetKind.TOOL, tool=tool_name) if same and not far else Target(TargetKind.MUTE)
                )
                yield Item(
                    f"cv-{tool_name}-{k:02d}/{condition}",
                    Family.CUE_VALIDITY,
                    condition,
                    split,
                    group,
                    (context, trigger),
                    segments,
                    (float(gap.removesuffix("ms")),),
                    target,
                    {
                        "source": source,
                        "field": field,
                        "gap_ms": int(gap.removesuffix("ms")),
                        "rendering": rendering,
                    },
                )


def _cue_items() -> Iterator[Item]:
    return cue_variants("test")


def check_side_talk_cue(side_talk_cue: str) -> str:
    if side_talk_cue not in SIDE_TALK_CUES:
        raise ValueError(f"side_talk_cue must be one of {SIDE_TALK_CUES}, got {side_talk_cue!r}")
    return side_talk_cue


@cache
def all_items(side_talk_cue: str = "none") -> tuple[Item, ...]:
    """Every item; ``side_talk_cue`` chooses the side-talk rendering (module docstring)."""
    check_side_talk_cue(side_talk_cue)
    side_talk = tuple(side_talk_items(side_talk_cue))
    act_lengths = {
        split: tuple(
            spoken_length(item.transcript)
            for item in (*_switch_items(), *side_talk)
            if item.split == split and item.condition != "switch" and item.has_audio
        )
        for split in SPLITS
    }
    return (*_switch_items(), *side_talk, *self_talk_items(act_lengths), *_cue_items())


def select_items(
    family: Family | str,
    split: str | None = None,
    conditions: tuple[str, ...] | None = None,
    side_talk_cue: str = "none",
) -> tuple[Item, ...]:
    """Items of one family, optionally one split (``"train"``/``"test"``) and some conditions."""
    family = Family(family)
    if split not in (None, *SPLITS):
        raise ValueError(f"VoiceGate split must be one of {SPLITS} or None (every item), got {split!r}")
    known = conditions_of(family)
    for condition in conditions or ():
        if condition not in known:
            raise ValueError(f"unknown {family.value} condition {condition!r}; conditions: {known}")
    return tuple(
        item
        for item in all_items(side_talk_cue)
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
