"""Hear2Act's tool-calling demonstrations (``agents.hear2act.tool_demos``) and how the tool SFT
trainer renders them (``training.llm.tool_sft``): the chat is the one TRL's factory builds, and
the loss sees the assistant turns only."""

from __future__ import annotations

import json

import pytest

from agents.hear2act.tool_demos import CLOSING, hear2act_tool_demos
from hear_gym.integrations.trl import environment_factory, offered_tools
from training.llm.tool_sft import tokenized_dialogue
from training.tiny_model import _tokenizer, tool_call_frames

HEAR2ACT = "hear_gym/Hear2Act-v0"
OPTIONS = {"feedback": "prosody", "reward": "tiered", "turn_cost": 0.05, "max_turns": 8}


@pytest.fixture(scope="module")
def demos():
    return hear2act_tool_demos(limit=2, **OPTIONS)


def test_demos_are_the_experts_dialogues_as_factory_chats(demos):
    """Each dialogue alternates assistant calls and tool results (the T+S tag on each), ends with
    the closing reply once the episode is over, and its return is the env's (checked while
    building: the factory and the env played the same episode)."""
    for demo in demos:
        system, user, *turns, closing = demo["messages"]
        assert system["role"] == "system" and user["content"].startswith("[domain]")
        assert "[concern_state]" in user["content"]
        calls, results = turns[::2], turns[1::2]
        assert all(c["role"] == "assistant" and len(c["tool_calls"]) == 1 for c in calls)
        assert all(r["role"] == "tool" and "[concern_state] " in r["content"] for r in results)
        assert results[-1]["content"].endswith("(The episode is over.)")
        assert closing == {"role": "assistant", "content": CLOSING}
        assert demo["return"] > 0  # the expert ends on an option that meets some concern
    assert hear2act_tool_demos(limit=2, **OPTIONS) == demos  # deterministic


@pytest.mark.slow  # trains a BPE tokenizer on every family's corpus (about 10 s)
def test_tool_sft_trains_on_the_assistant_turns_only(demos):
    """The loss mask covers each tool call and the closing reply with their end-of-turn tokens,
    nothing of the prompt or the tool results, in the tool-calling vocabulary with its call frames."""
    tokenizer = _tokenizer(512, tool_calling=True)
    tokenizer.add_tokens(tool_call_frames())
    tools = offered_tools(environment_factory(HEAR2ACT, access="T+S")())
    row = tokenized_dialogue(tokenizer, demos[0]["messages"], tools)
    trained = tokenizer.decode(
        [t for t, m in zip(row["input_ids"], row["assistant_masks"], strict=True) if m]
    )
    calls = [m["tool_calls"][0]["function"] for m in demos[0]["messages"] if m.get("tool_calls")]
    expected = "".join(
        f"<tool_call>\n{json.dumps({'name': c['name'], 'arguments': c['arguments']})}\n</tool_call><|im_end|>"
        for c in calls
    )
    assert trained == expected + CLOSING + "<|im_end|>"
