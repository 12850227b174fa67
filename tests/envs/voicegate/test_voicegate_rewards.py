"""The rule rewards checked cell by cell against tables worked out by hand: every target kind
against every kind of decision. ``paper`` is VoxGate's table (section 5.2) exactly: the extra
-0.2 is for "malformed tool syntax" only, so an empty reply on an answer target gets the
paper's -0.5 and on a mute or tool target the plain -1 of a wrong action. ``strict_format`` keeps
the earlier shaping (-0.2 on every malformed reply), for the reason ``scoring.py`` gives."""

import gymnasium as gym
import pytest

from hear_gym.envs.voicegate.actions import DecisionKind, GateAction, parse_reply
from hear_gym.envs.voicegate.items.generator import all_items
from hear_gym.envs.voicegate.items.model import Addressee, TargetKind
from hear_gym.envs.voicegate.scoring import REWARDS, score


def _item(kind: TargetKind):
    return next(i for i in all_items() if i.target.kind is kind)


def _decisions(item):
    tools = sorted({i.target.tool for i in all_items() if i.target.kind is TargetKind.TOOL})
    right_tool = item.target.tool or tools[0]
    wrong_tool = next(t for t in tools if t != right_tool)
    assistant = next((n for n, u in enumerate(item.utterances) if u.addressee is Addressee.ASSISTANT), 0)
    bystander = next(
        (n for n, u in enumerate(item.utterances) if u.addressee is Addressee.BYSTANDER), assistant
    )
    return {
        "mute": GateAction(DecisionKind.MUTE),
        "right tool": GateAction(DecisionKind.TOOL, tool=right_tool, params={}),
        "wrong tool": GateAction(DecisionKind.TOOL, tool=wrong_tool, params={}),
        "answer the assistant-directed": GateAction(DecisionKind.ANSWER, utterance=assistant),
        "answer the bystander": GateAction(DecisionKind.ANSWER, utterance=bystander),
        "broken tool call": parse_reply(f'<|TOOL|>{{"name": "{right_tool}", "params": }}</|TOOL|>'),
        "empty reply": parse_reply("   "),
        "mute token inside text": parse_reply("I will stay quiet: [Mute]"),
    }


# paper: +1 correct mute or matching tool, -1 any other action, -0.2 more for malformed tool
# syntax only; answer targets: +0.5 any answer, -1 mute, -0.5 empty or tool-only (-0.7 broken).
PAPER = {
    TargetKind.MUTE: {
        "mute": 1.0,
        "right tool": -1.0,  # a tool where silence was right: wrong, whatever the tool
        "wrong tool": -1.0,
        "answer the assistant-directed": -1.0,
        "answer the bystander": -1.0,
        "broken tool call": -1.2,
        "empty reply": -1.0,
        "mute token inside text": -1.0,
    },
    TargetKind.TOOL: {
        "mute": -1.0,
        "right tool": 1.0,
        "wrong tool": -1.0,
        "answer the assistant-directed": -1.0,
        "answer the bystander": -1.0,
        "broken tool call": -1.2,
        "empty reply": -1.0,
        "mute token inside text": -1.0,
    },
    TargetKind.ANSWER: {
        "mute": -1.0,
        "right tool": -0.5,
        "wrong tool": -0.5,
        "answer the assistant-directed": 0.5,
        "answer the bystander": 0.5,  # the paper rewards any non-empty answer
        "broken tool call": -0.7,
        "empty reply": -0.5,  # the paper's "empty ... output receives -0.5"
        "mute token inside text": -0.5,
    },
}
# strict_format: the same, with -0.2 on every malformed reply
STRICT = {
    kind: {
        name: value - (0.2 if name in ("empty reply", "mute token inside text") else 0.0)
        for name, value in table.items()
    }
    for kind, table in PAPER.items()
}
# judged: like the others, +1 only for the answer the judge gives to the assistant
JUDGED_ANSWER = {
    "mute": -1.0,
    "right tool": -1.0,
    "wrong tool": -1.0,
    "answer the assistant-directed": 1.0,
    "answer the bystander": -1.0,
    "broken tool call": -1.2,
    "empty reply": -1.0,
    "mute token inside text": -1.0,
}


def _rewards(name, item):
    return {label: REWARDS[name](item, score(item, action)) for label, action in _decisions(item).items()}


def test_the_hand_tables_cover_every_reward():
    assert set(REWARDS) == {"paper", "strict_format", "judged"}


@pytest.mark.parametrize("kind", list(TargetKind))
def test_paper_reward_matches_the_papers_table(kind):
    assert _rewards("paper", _item(kind)) == pytest.approx(PAPER[kind])


@pytest.mark.parametrize("kind", list(TargetKind))
def test_strict_format_reward_penalizes_every_malformed_reply(kind):
    assert _rewards("strict_format", _item(kind)) == pytest.approx(STRICT[kind])


def test_judged_reward_scores_whom_an_answer_addresses():
    assert _rewards("judged", _item(TargetKind.ANSWER)) == pytest.approx(JUDGED_ANSWER)


def test_only_replies_with_a_tool_tag_are_broken_tool_calls():
    decisions = _decisions(_item(TargetKind.MUTE))
    assert decisions["broken tool call"].broken_tool_call
    assert decisions["broken tool call"].as_record()["broken_tool_call"] is True
    for name in ("empty reply", "mute token inside text"):
        assert decisions[name].kind is DecisionKind.MALFORMED and not decisions[name].broken_tool_call


@pytest.mark.parametrize(("reward", "expected"), [(None, -0.5), ("paper", -0.5), ("strict_format", -0.7)])
def test_the_env_gives_an_empty_answer_the_chosen_rewards_value(reward, expected):
    item = _item(TargetKind.ANSWER)
    kwargs = {} if reward is None else {"reward": reward}  # None: the default is the paper's table
    env = gym.make("hear_gym/VoiceGate-v0", item_ids=[item.item_id], actions="text", access="T", **kwargs)
    env.reset(options={"item_id": item.item_id})
    assert env.step("")[1] == pytest.approx(expected)


def test_an_unknown_reward_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="reward must be one of"):
        gym.make("hear_gym/VoiceGate-v0", reward="shaped")
