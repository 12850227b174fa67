"""VoiceGate action set: the Discrete layout and the strict parser of the canonical text grammar.

Discrete layout (``N_ACTIONS`` = 13):

======  ==============================================================================
index   action
======  ==============================================================================
0       ``[Mute]``: stay silent, execute nothing
1-10    call tool ``TOOL_NAMES[i - 1]`` (no arguments; arguments are never scored)
11, 12  answer in words, addressing utterance 1 or 2 of the input (12 is invalid on
        one-utterance items; ``action_mask`` marks it)
======  ==============================================================================

Text replies follow the paper's grammar (Appendix B)::

    [Mute]
    <|TOOL|>{"name": "unlock_door", "params": {"door": "front"}}</|TOOL|>
    any natural-language answer that contains neither

The parser is strict. Mute: the whole reply is the mute token, case and inner/outer whitespace
normalized (``[mute]``, `` [ Mute ] ``). Tool: the whole reply is exactly one tool block (outer
whitespace allowed); its body is one JSON object with exactly the keys ``name`` (a known tool)
and ``params`` (an object). Answer: non-empty text with no mute token and no tool tag.
Everything else is ``MALFORMED`` with the reason: a mute token inside other text, text around a
tool block, two blocks, unbalanced tags, bad JSON, an unknown tool, an empty reply. A malformed
reply that holds a tool tag is a broken tool call (``broken_tool_call``: the paper's "malformed
tool syntax", which its reward penalizes). Malformed output is scored as wrong (see
``hear_gym.envs.voicegate.scoring``), never a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from hear_gym.core.json_reply import json_depth
from hear_gym.envs.voicegate.items.model import NO_UTTERANCE
from hear_gym.envs.voicegate.items.pools import TOOL_NAMES

MUTE_TOKEN = "[Mute]"
TOOL_OPEN, TOOL_CLOSE = "<|TOOL|>", "</|TOOL|>"
MUTE = 0
TOOL0 = 1
ANSWER0 = TOOL0 + len(TOOL_NAMES)
MAX_UTTERANCES = 2
MAX_JSON_DEPTH = 16  # tool params are flat objects; deeper nesting is malformed
N_ACTIONS = ANSWER0 + MAX_UTTERANCES
_MUTE_ONLY = re.compile(r"^\s*\[\s*mute\s*\]\s*$", re.IGNORECASE)
_MUTE_ANYWHERE = re.compile(r"\[\s*mute\s*\]", re.IGNORECASE)
_TOOL_TAG = re.compile(r"<\s*/?\s*\|\s*tool\s*\|\s*>", re.IGNORECASE)


class DecisionKind(str, Enum):
    MUTE = "mute"
    TOOL = "tool"
    ANSWER = "answer"
    MALFORMED = "malformed"


@dataclass(frozen=True)
class GateAction:
    kind: DecisionKind
    tool: str | None = None
    params: dict[str, Any] | None = None
    text: str | None = None  # a free-text answer (text grammar)
    utterance: int | None = None  # the utterance a Discrete answer addresses
    error: str | None = None  # why it is malformed
    broken_tool_call: bool = False  # malformed because of its tool syntax (the reply holds a tool tag)

    def as_record(self) -> dict[str, Any]:
        """JSON-ready. Vector envs batch ``info`` by type, so numbers are never null (an absent
        utterance is ``NO_UTTERANCE``) and the call's arguments, whatever the agent wrote, are
        kept as canonical JSON text rather than as a nested object."""
        return {
            "kind": self.kind.value,
            "tool": self.tool,
            "params": None if self.params is None else json.dumps(self.params, sort_keys=True),
            "text": self.text,
            "utterance": NO_UTTERANCE if self.utterance is None else self.utterance,
            "error": self.error,
            "broken_tool_call": self.broken_tool_call,
        }


def malformed(reason: str, broken_tool_call: bool = False) -> GateAction:
    return GateAction(DecisionKind.MALFORMED, error=reason, broken_tool_call=broken_tool_call)


def _broken_tool_call(reason: str) -> GateAction:
    return malformed(reason, broken_tool_call=True)


def decode(index: int, n_utterances: int) -> GateAction:
    if not 0 <= index < N_ACTIONS:
        return malformed(f"action index {index} is outside 0..{N_ACTIONS - 1}")
    if index == MUTE:
        return GateAction(DecisionKind.MUTE)
    if index < ANSWER0:
        return GateAction(DecisionKind.TOOL, tool=TOOL_NAMES[index - TOOL0], params={})
    utterance = index - ANSWER0
    if utterance >= n_utterances:
        return malformed(f"answer to utterance {utterance + 1}, but the input has {n_utterances}")
    return GateAction(DecisionKind.ANSWER, utterance=utterance)


def encode(action: GateAction) -> int:
    if action.kind is DecisionKind.MUTE:
        return MUTE
    if action.kind is DecisionKind.TOOL:
        return TOOL0 + TOOL_NAMES.index(action.tool)
    if action.kind is DecisionKind.ANSWER and action.utterance is not None:
        return ANSWER0 + action.utterance
    raise ValueError(f"{action} has no Discrete index (free-text answers and malformed actions)")


def action_mask(n_utterances: int) -> np.ndarray:
    mask = np.ones(N_ACTIONS, dtype=np.int8)
    mask[ANSWER0 + n_utterances :] = 0
    return mask


def parse_reply(reply: str) -> GateAction:
    """Parse one model reply under the canonical grammar (module docstring)."""
    if not isinstance(reply, str):
        return malformed(f"reply must be a string, got {type(reply).__name__}")
    if _MUTE_ONLY.match(reply):
        return GateAction(DecisionKind.MUTE)
    if _MUTE_ANYWHERE.search(reply):
        return malformed("the mute token appears inside other text")
    tags = _TOOL_TAG.findall(reply)
    if not tags:
        text = reply.strip()
        return GateAction(DecisionKind.ANSWER, text=text) if text else malformed("empty reply")
    return _parse_tool(reply.strip(), tags)


def _parse_tool(reply: str, tags: list[str]) -> GateAction:
    if tags != [TOOL_OPEN, TOOL_CLOSE]:
        return _broken_tool_call(
            f"a tool call needs exactly one {TOOL_OPEN}...{TOOL_CLOSE} block, found tags {tags}"
        )
    if not (reply.startswith(TOOL_OPEN) and reply.endswith(TOOL_CLOSE)):
        return _broken_tool_call("text outside the tool block")
    body = reply[len(TOOL_OPEN) : -len(TOOL_CLOSE)]
    if json_depth(body) > MAX_JSON_DEPTH:
        return _broken_tool_call(f"tool body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        call = json.loads(body)
    except json.JSONDecodeError as exc:
        return _broken_tool_call(f"tool body is not JSON ({exc.msg})")
    if not isinstance(call, dict) or set(call) != {"name", "params"}:
        return _broken_tool_call('tool body must be an object with exactly the keys "name" and "params"')
    if call["name"] not in TOOL_NAMES:
        return _broken_tool_call(f"unknown tool {call['name']!r}")
    if not isinstance(call["params"], dict):
        return _broken_tool_call('"params" must be an object')
    return GateAction(DecisionKind.TOOL, tool=call["name"], params=call["params"])


def format_tool_call(name: str, params: dict[str, Any]) -> str:
    """The canonical text of a tool call (what a well-behaved text agent emits)."""
    return f"{TOOL_OPEN}{json.dumps({'name': name, 'params': params})}{TOOL_CLOSE}"
