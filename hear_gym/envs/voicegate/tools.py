"""VoiceGate's actions as named tools (``hear_gym.core.tools``): ``mute``, one tool per inventory
tool (``unlock_door(door)``, ``transfer_money(recipient, amount)``, ...; the parameters and their
descriptions are the inventory's JSON schema's, required ones required, an optional one left out
taking the schema's default where it has one and left out of the call where it has none) and ``answer(text)``.

Each call writes the canonical text reply (``[Mute]``, a ``<|TOOL|>`` block, or the answer's
words), so it meets the env's parser and scoring exactly as a text agent's reply would. Arguments
are never scored (the paper scores the decision), so an argument outside its schema's enum or
range still calls the tool; an answer the parser refuses (empty, or holding a mute token or a tool
tag) is malformed, as it is for a text agent.
"""

from __future__ import annotations

from hear_gym.core.tools import ActionTool, ToolParam, ToolSet
from hear_gym.envs.voicegate.actions import MUTE_TOKEN, format_tool_call
from hear_gym.envs.voicegate.items.pools import tool_inventory

INSTRUCTION = (
    "You are the voice assistant of a wearable device. You hear what was said near the wearer. "
    "Act by calling exactly one tool: a device tool when the wearer asks you to do something, "
    "mute when the speech was not meant for you (side-talk, self-talk, another speaker), or "
    "answer when the wearer asks you a question."
)
JSON_TYPES = {"string": str, "integer": int}


def _inventory_tool(entry: dict) -> ActionTool:
    schema = entry["parameters"]
    required = set(schema.get("required", ()))
    params = tuple(
        ToolParam(
            name,
            JSON_TYPES[spec["type"]],
            spec.get("description", name),
            name in required,
            None if name in required else spec.get("default"),
        )
        for name, spec in schema["properties"].items()
    )
    name = entry["name"]
    return ActionTool(
        name, entry["description"], lambda env, **params: format_tool_call(name, params), params
    )


def _answer(env, text: str) -> str:
    return text


TOOLS = ToolSet(
    tools=(
        ActionTool(
            "mute", "Stay silent and execute nothing: the speech was not for you.", lambda env: MUTE_TOKEN
        ),
        *(_inventory_tool(entry) for entry in tool_inventory()),
        ActionTool(
            "answer",
            "Answer the wearer in words.",
            _answer,
            (ToolParam("text", str, "what you say to the wearer"),),
        ),
    ),
    invalid_reply="",  # the empty reply: malformed
    instruction=INSTRUCTION,
    text_access="T",
    shown=("transcript",),
)
