"""Scoring one VoiceGate decision: the side-talk judge, the outcome record, the rewards.

Correctness (paper section 3.4, Appendix B):

* mute target: correct iff the action is ``[Mute]``;
* tool target: correct iff the action is a well-formed call of the target tool (arguments are
  recorded and checked against the tool's schema in ``params_valid``, but never scored);
* answer target (side-talk only): correct iff the action is an answer and the judge labels it
  ``assistant`` (it responds to the assistant-directed utterance alone).

A ``Judge`` labels a free-text answer ``assistant``, ``bystander``, ``both`` or ``neither``.
``KeywordJudge`` is the deterministic default: an answer "responds to" an utterance when it
contains one of the utterance's topic words that the other utterance does not share. A Discrete
answer names its utterance, so it needs no judge. An LLM judge plugs in through the same
protocol (``agents.voicegate.judge``).

Rewards are a registry (``REWARDS``): ``paper`` is the GRPO reward of section 5.2 (correct
mute/tool +1, incorrect -1, malformed -0.2 extra; for answer targets a non-empty answer +0.5,
mute -1, empty or tool-only -0.5); ``judged`` scores answer targets like the others (+1 iff the
judge says ``assistant``), so an RL agent must also learn *whom* to answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Protocol

import jsonschema

from hear_gym.envs.voicegate.actions import DecisionKind, GateAction
from hear_gym.envs.voicegate.items.model import Addressee, Item, TargetKind
from hear_gym.envs.voicegate.items.pools import tool, words

MALFORMED_PENALTY = 0.2


class JudgeLabel(str, Enum):
    ASSISTANT = "assistant"
    BYSTANDER = "bystander"
    BOTH = "both"
    NEITHER = "neither"


class Judge(Protocol):
    name: str

    def label(self, item: Item, answer: str) -> JudgeLabel: ...


class KeywordJudge:
    """Deterministic topic-word judge for the synthetic side-talk items."""

    name = "keyword-v1"

    def label(self, item: Item, answer: str) -> JudgeLabel:
        said = set(words(answer))
        hit = {Addressee.ASSISTANT: False, Addressee.BYSTANDER: False}
        for utterance in item.utterances:
            others = {w for u in item.utterances if u is not utterance for w in u.topic_words}
            distinctive = set(utterance.topic_words) - others
            if utterance.addressee in hit and said & distinctive:
                hit[utterance.addressee] = True
        if hit[Addressee.ASSISTANT] and hit[Addressee.BYSTANDER]:
            return JudgeLabel.BOTH
        if hit[Addressee.ASSISTANT]:
            return JudgeLabel.ASSISTANT
        return JudgeLabel.BYSTANDER if hit[Addressee.BYSTANDER] else JudgeLabel.NEITHER


@dataclass(frozen=True)
class Outcome:
    correct: bool
    action: GateAction
    judge_label: JudgeLabel | None = None  # answers on side-talk items
    params_valid: bool | None = None  # tool calls: do the arguments fit the schema?
    false_execution: bool = False  # a tool ran where the target was [Mute] or an answer

    def as_record(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "action": self.action.as_record(),
            "judge_label": self.judge_label.value if self.judge_label else None,
            "params_valid": bool(self.params_valid),  # False also when there is no tool call
            "false_execution": self.false_execution,
        }


def _answer_label(item: Item, action: GateAction, judge: Judge) -> JudgeLabel:
    if action.utterance is not None:
        addressee = item.utterances[action.utterance].addressee
        return JudgeLabel.ASSISTANT if addressee is Addressee.ASSISTANT else JudgeLabel.BYSTANDER
    return judge.label(item, action.text or "")


@cache
def _parameter_validator(tool_name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(tool(tool_name).parameters)  # built once per tool


def score(item: Item, action: GateAction, judge: Judge | None = None) -> Outcome:
    target = item.target
    params_valid = None
    if action.kind is DecisionKind.TOOL:
        params_valid = _parameter_validator(action.tool).is_valid(action.params)
    label = None
    if action.kind is DecisionKind.ANSWER and target.kind is TargetKind.ANSWER:
        label = _answer_label(item, action, judge or KeywordJudge())
    correct = {
        TargetKind.MUTE: action.kind is DecisionKind.MUTE,
        TargetKind.TOOL: action.kind is DecisionKind.TOOL and action.tool == target.tool,
        TargetKind.ANSWER: label is JudgeLabel.ASSISTANT,
    }[target.kind]
    false_execution = action.kind is DecisionKind.TOOL and target.kind is not TargetKind.TOOL
    return Outcome(correct, action, label, params_valid, false_execution)


def paper_reward(item: Item, outcome: Outcome) -> float:
    kind = outcome.action.kind
    penalty = MALFORMED_PENALTY if kind is DecisionKind.MALFORMED else 0.0
    if item.target.kind is TargetKind.ANSWER:
        if kind is DecisionKind.ANSWER:
            return 0.5
        return (-1.0 if kind is DecisionKind.MUTE else -0.5) - penalty
    return (1.0 if outcome.correct else -1.0) - penalty


def judged_reward(item: Item, outcome: Outcome) -> float:
    penalty = MALFORMED_PENALTY if outcome.action.kind is DecisionKind.MALFORMED else 0.0
    return (1.0 if outcome.correct else -1.0) - penalty


Reward = Callable[[Item, Outcome], float]
REWARDS: dict[str, Reward] = {"paper": paper_reward, "judged": judged_reward}
