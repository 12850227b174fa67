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

Rewards are a registry (``REWARDS``), the env's ``reward=`` option:

* ``paper`` (the default) is VoxGate's GRPO reward, section 5.2, exactly: a correct mute or
  matching tool +1, any other action -1, and "malformed tool syntax" (a reply that holds a tool
  tag but is no canonical call: ``GateAction.broken_tool_call``) 0.2 more; for answer targets a
  non-empty answer +0.5, mute -1, an empty or tool-only reply -0.5 (a broken tool call -0.7).
  Other malformed replies (an empty reply, a mute token inside other text) are wrong actions
  with no extra penalty: -1, or -0.5 on answer targets.
* ``strict_format`` is the same table with the 0.2 on *every* malformed reply, empty ones
  included (an earlier release's ``paper`` reward). Why keep it: the
  GRPO trainers score a reply cut by the token cap as the empty reply, and under ``paper`` that
  costs less than finishing a broken tool call (-1 vs -1.2), so running into the cap is a cheaper
  exit; ``strict_format`` prices the two alike.
* ``judged`` scores answer targets like the others (+1 iff the judge says ``assistant``, else
  -1), so an RL agent must also learn *whom* to answer; broken tool calls cost 0.2 more, as in
  ``paper``.
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


def _broken_tool_call_penalty(action: GateAction) -> float:
    """The paper's extra penalty: malformed tool syntax only."""
    return MALFORMED_PENALTY if action.kind is DecisionKind.MALFORMED and action.broken_tool_call else 0.0


def _any_malformed_penalty(action: GateAction) -> float:
    return MALFORMED_PENALTY if action.kind is DecisionKind.MALFORMED else 0.0


def _rule_reward(item: Item, outcome: Outcome, penalty: Callable[[GateAction], float]) -> float:
    kind = outcome.action.kind
    if item.target.kind is TargetKind.ANSWER:
        if kind is DecisionKind.ANSWER:
            return 0.5
        return (-1.0 if kind is DecisionKind.MUTE else -0.5) - penalty(outcome.action)
    return (1.0 if outcome.correct else -1.0) - penalty(outcome.action)


def paper_reward(item: Item, outcome: Outcome) -> float:
    return _rule_reward(item, outcome, _broken_tool_call_penalty)


def strict_format_reward(item: Item, outcome: Outcome) -> float:
    return _rule_reward(item, outcome, _any_malformed_penalty)


def judged_reward(item: Item, outcome: Outcome) -> float:
    return (1.0 if outcome.correct else -1.0) - _broken_tool_call_penalty(outcome.action)


Reward = Callable[[Item, Outcome], float]
REWARDS: dict[str, Reward] = {
    "paper": paper_reward,
    "strict_format": strict_format_reward,
    "judged": judged_reward,
}
