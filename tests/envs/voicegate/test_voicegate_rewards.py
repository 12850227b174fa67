"""The paper's rule rewards (VGBench section 5.2) checked cell by cell against a table worked out
by hand: every target kind against every kind of decision."""

import pytest

from hear_gym.envs.voicegate.actions import DecisionKind, GateAction
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
        "malformed": GateAction(DecisionKind.MALFORMED, error="no tag"),
    }


# +1 correct mute or matching tool, -1 otherwise, -0.2 more when malformed; answer targets:
# +0.5 any answer, -1 mute, -0.5 tool-only (or malformed: -0.5 - 0.2).
PAPER = {
    TargetKind.MUTE: {
        "mute": 1.0,
        "right tool": -1.0,  # a tool where silence was right: wrong, whatever the tool
        "wrong tool": -1.0,
        "answer the assistant-directed": -1.0,
        "answer the bystander": -1.0,
        "malformed": -1.2,
    },
    TargetKind.TOOL: {
        "mute": -1.0,
        "right tool": 1.0,
        "wrong tool": -1.0,
        "answer the assistant-directed": -1.0,
        "answer the bystander": -1.0,
        "malformed": -1.2,
    },
    TargetKind.ANSWER: {
        "mute": -1.0,
        "right tool": -0.5,
        "wrong tool": -0.5,
        "answer the assistant-directed": 0.5,
        "answer the bystander": 0.5,  # the paper rewards any non-empty answer
        "malformed": -0.7,
    },
}
# "judged": like the others, +1 only for the answer the judge gives to the assistant.
JUDGED_ANSWER = {
    "mute": -1.0,
    "right tool": -1.0,
    "wrong tool": -1.0,
    "answer the assistant-directed": 1.0,
    "answer the bystander": -1.0,
    "malformed": -1.2,
}


@pytest.mark.parametrize("kind", list(TargetKind))
def test_paper_reward_matches_the_hand_table(kind):
    item = _item(kind)
    got = {name: REWARDS["paper"](item, score(item, action)) for name, action in _decisions(item).items()}
    assert got == pytest.approx(PAPER[kind])


def test_judged_reward_scores_whom_an_answer_addresses():
    item = _item(TargetKind.ANSWER)
    got = {name: REWARDS["judged"](item, score(item, a)) for name, a in _decisions(item).items()}
    assert got == pytest.approx(JUDGED_ANSWER)
