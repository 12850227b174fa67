"""Onset's actions as named tools (``hear_gym.core.tools``): ``wait`` (keep listening) and
``act(action)`` with one of the five action labels. A call writes the label, the env's text
action; a label the grammar does not know is the env's ``invalid`` decision (-1, the step used),
as for a text agent."""

from __future__ import annotations

from hear_gym.core.tools import ActionTool, ToolParam, ToolSet
from hear_gym.envs.onset.actions import SOURCE_ACTIONS, WAIT

INSTRUCTION = (
    "You hear the user's speech as it streams in, one prefix at a time. At each prefix, call "
    "exactly one tool: wait to keep listening, or act once the speech so far supports an action."
)


def _act(env, action: str) -> str:
    return action


TOOLS = ToolSet(
    tools=(
        ActionTool("wait", "Keep listening: take no action at this prefix.", lambda env: WAIT),
        ActionTool(
            "act",
            "Act on what you have heard so far.",
            _act,
            (ToolParam("action", str, f"one of {', '.join(SOURCE_ACTIONS)}"),),
        ),
    ),
    invalid_reply="",  # names no label: the invalid decision
    instruction=INSTRUCTION,
    text_access="T",
    shown=("text",),
)
