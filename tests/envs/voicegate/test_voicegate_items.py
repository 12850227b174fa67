"""VoiceGate item set: the paper's counts, balance, targets and splits; disjoint train/test
voices; the side-talk cue option; pools validation; generation is a pure function of the
generator version (same records in a fresh process)."""

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest
from pydantic import ValidationError

from hear_gym.envs.voicegate.items.generator import (
    CUE_CONDITIONS,
    SIDE_TALK_CONFIGS,
    TEST_VOICES,
    TRAIN_VOICES,
    all_items,
    select_items,
)
from hear_gym.envs.voicegate.items.model import Addressee, Placement, Source, TargetKind
from hear_gym.envs.voicegate.items.pools import (
    SELF_TALK_FRAMES,
    TOOL_NAMES,
    Phrasing,
    Tool,
    phrasing,
    tool,
    tool_set,
)
from hear_gym.speech.espeak import VOICES

FINGERPRINT = (
    "import hashlib, json; from hear_gym.envs.voicegate.items.generator import all_items; "
    "print(hashlib.sha256(json.dumps([i.as_record() for i in all_items()]).encode()).hexdigest())"
)


def test_speaker_switch_counts_and_conditions():
    items = select_items("speaker_switch")
    pairs = {i.group for i in items}
    assert len(pairs) == 400 and len(items) == 1200
    per_tool = Counter(i.target.tool for i in items if i.condition == "text_only")
    assert per_tool == {name: 40 for name in TOOL_NAMES}
    assert Counter(i.split for i in items if i.condition == "switch") == {"train": 320, "test": 80}
    voices = {s.voice for i in items for s in i.segments or ()}
    assert len(voices) >= 8
    for group in pairs:
        by = {i.condition: i for i in items if i.group == group}
        same, switch, text = by["same_speaker"], by["switch"], by["text_only"]
        assert same.utterances == switch.utterances == text.utterances  # the words are held fixed
        assert len({same.split, switch.split, text.split}) == 1
        assert same.target.kind is TargetKind.TOOL and text.target == same.target
        assert switch.target.kind is TargetKind.MUTE and text.segments is None
        assert switch.gaps_ms == (600.0,) and same.gaps_ms == (0.0,)
        a, b = switch.segments
        assert a.voice == same.segments[0].voice == same.segments[1].voice != b.voice
        assert (b.source, b.placement) == (Source.BYSTANDER, Placement.FAR)


def test_cue_validity_follows_the_proximity_rule():
    items = select_items("cue_validity")
    assert len({i.group for i in items}) == 80 and Counter(i.condition for i in items) == dict.fromkeys(
        CUE_CONDITIONS, 80
    )
    held_out = {i.group for i in select_items("speaker_switch", "test")}
    assert {i.group for i in items} == held_out
    for item in items:
        cues = item.cues
        tool_target = cues["source"] == "same" and cues["field"] == "near"
        assert (item.target.kind is TargetKind.TOOL) == tool_target
        context, trigger = item.segments
        assert trigger.placement is (Placement.FAR if cues["field"] == "far" else Placement.NEAR)
        scene_far = cues["rendering"] == "scene_consistent" and cues["field"] == "far"
        assert context.placement is (Placement.FAR if scene_far else Placement.NEAR)
        assert item.gaps_ms == (float(cues["gap_ms"]),)


def test_side_talk_counts_are_the_papers_and_as_balanced_as_they_can_be():
    items = select_items("side_talk")
    per_config = Counter(i.condition for i in items)
    assert len(items) == 395 and set(per_config) == set(SIDE_TALK_CONFIGS)
    assert set(per_config.values()) == {49, 50}  # counts differ by at most one
    for factor in range(3):  # order, assistant content, bystander content: levels one item apart
        levels = Counter(i.condition.split("-")[factor] for i in items)
        assert sorted(levels.values()) == [197, 198]
    assert Counter(i.split for i in items) == {"train": 315, "test": 80}
    assert set(Counter(i.condition for i in items if i.split == "test").values()) == {10}
    assert sum(i.cues["vocative"] for i in items) == 198
    assert Counter(i.cues["vocative"] for i in items if i.split == "test") == {True: 40, False: 40}


def test_side_talk_is_one_near_voice_by_default_and_turned_away_on_request():
    default = select_items("side_talk")
    turned = select_items("side_talk", side_talk_cue="turned_away")
    assert [i.item_id for i in default] == [i.item_id for i in turned]
    for item, other in zip(default, turned, strict=True):
        assert item.utterances == other.utterances and item.split == other.split
        assert (item.cues["acoustic"], other.cues["acoustic"]) == ("none", "turned_away")
        order, assistant_content, _ = item.condition.split("-")
        first = item.utterances[0].addressee
        assert first is (Addressee.ASSISTANT if order == "assistant_first" else Addressee.BYSTANDER)
        assert len({s.voice for s in item.segments}) == 1  # one speaker: identity cannot tell
        assert {s.placement for s in item.segments} == {Placement.NEAR}  # acoustics cannot tell
        assert [s.voice for s in item.segments] == [s.voice for s in other.segments]
        for segment, utterance in zip(other.segments, other.utterances, strict=True):
            expected = Placement.NEAR if utterance.addressee is Addressee.ASSISTANT else Placement.TURNED_AWAY
            assert segment.placement is expected
        to_assistant = next(u for u in item.utterances if u.addressee is Addressee.ASSISTANT)
        if assistant_content == "tool":
            assert item.target.tool == to_assistant.tool is not None
        else:
            assert item.target.kind is TargetKind.ANSWER
            assert item.utterances[item.target.utterance] is to_assistant
        tools = [u.tool for u in item.utterances if u.tool]
        assert len(tools) == len(set(tools))  # two tool-like utterances ask for different tools
    with pytest.raises(ValueError, match="side_talk_cue must be one of"):
        select_items("side_talk", side_talk_cue="whisper")


def test_self_talk_frames_and_targets():
    items = select_items("self_talk")
    per_frame = Counter(i.condition for i in items)
    assert per_frame == {**dict.fromkeys(SELF_TALK_FRAMES, 32), "metaphor": 31}  # 223, as retained
    assert Counter(i.split for i in items) == {"train": 181, "test": 42}
    assert set(Counter(i.condition for i in items if i.split == "test").values()) == {6}
    assert all(i.target.kind is TargetKind.MUTE and i.command_tool() in TOOL_NAMES for i in items)
    # two sentences of one monologue, joined as a same-speaker command is: the count, the pause
    # and the length do not tell self-talk from an act input (shortcut tests)
    for item in items:
        assert {u.addressee for u in item.utterances} == {Addressee.SELF}
        assert [u.tool is None for u in item.utterances] in ([True, False], [False, True])
        assert len({s.voice for s in item.segments}) == 1 and item.gaps_ms == (0.0,)
    assert Counter(i.cues["companion"] for i in items) == {"before": 112, "after": 111}


def test_train_and_test_voices_are_disjoint_in_every_role():
    assert set(TRAIN_VOICES).isdisjoint(TEST_VOICES) and set(TRAIN_VOICES) | set(TEST_VOICES) == set(VOICES)
    used = {"train": set(), "test": set()}
    for cue in ("none", "turned_away"):
        for item in all_items(cue):
            used[item.split] |= {s.voice for s in item.segments or ()}
    assert used == {"train": set(TRAIN_VOICES), "test": set(TEST_VOICES)}
    wearers = Counter(i.segments[0].voice for i in select_items("speaker_switch", "test", ("switch",)))
    assert set(wearers) == set(TEST_VOICES)


def test_item_ids_unique_and_groups_never_straddle_splits():
    items = all_items()
    assert len({i.item_id for i in items}) == len(items)
    splits = {}
    for item in items:
        assert splits.setdefault(item.group, item.split) == item.split


def test_generation_is_identical_in_a_fresh_process():
    here = hashlib.sha256(json.dumps([i.as_record() for i in all_items()]).encode()).hexdigest()
    there = subprocess.run([sys.executable, "-c", FINGERPRINT], capture_output=True, text=True, check=True)
    assert there.stdout.strip() == here


def test_pools_reject_bad_data():
    good = tool("unlock_door").model_dump()
    with pytest.raises(ValidationError, match="bare lowercase"):
        Tool.model_validate({**good, "cores": ["Unlock the {door}."] + good["cores"][1:]})
    bad_value = {**good, "slots": {"door": [{"words": "the moon", "value": 42}] * 8}}
    with pytest.raises(ValidationError):
        Tool.model_validate(bad_value)
    ph = phrasing().model_dump()
    with pytest.raises(ValidationError, match="topic words"):
        Phrasing.model_validate(
            {**ph, "questions": [{"text": "Is it sunny?", "topic_words": ["rain", "sunny"]}] * 40}
        )
    assert [t.name for t in tool_set().tools] == list(TOOL_NAMES)
