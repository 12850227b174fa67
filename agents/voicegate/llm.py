"""LLM agents for VoiceGate: the same action instruction for every model (paper section 3.4),
the tool inventory from the observation, replies in the canonical grammar, which the env's
text-action adapter parses (``gym.make("hear_gym/VoiceGate-v0", actions="text")``).

The paper does not print its system instruction; ``GATE_INSTRUCTION`` states the contract it
describes: one of ``[Mute]``, one tool block, or an answer, acting only when the speech is
addressed to the assistant by its user.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.llm.chat import ChatAgent, hearing
from agents.llm.clients import ChatClient
from agents.llm.parts import audio_part, text_part

GATE_INSTRUCTION = """You are a voice assistant worn by your user. You hear everything near the user, but you act only on requests your user addresses to you.
Available tools (JSON):
{tools}

Reply with exactly ONE of:
- [Mute] when the speech is not a request to you from your user (someone else speaking, your user talking to another person or to themselves);
- one tool call, and nothing else: <|TOOL|>{{"name": "<tool name>", "params": {{...}}}}</|TOOL|>
- a short natural-language answer (no tool call, no [Mute]) when your user asks you something no tool does."""


def gate_system_prompt(observation: dict[str, Any]) -> str:
    return GATE_INSTRUCTION.format(tools=observation["tools"])


def gate_messages(observation: dict[str, Any]) -> list[dict[str, str]]:
    """The text model's chat: the instruction, then the transcript. Agents and the SFT/GRPO
    trainers build their prompts here, so a model is trained on exactly what it is asked."""
    return [
        {"role": "system", "content": gate_system_prompt(observation)},
        {"role": "user", "content": observation["transcript"]},
    ]


def audio_gate_messages(observation: dict[str, Any]) -> list[dict[str, Any]]:
    """The audio model's chat: the instruction, then the input's audio (when it has any; its part
    carries the clip) and its words. Text-only inputs carry no audio; the model then gets the words
    alone."""
    length = int(observation["audio_length"][0])
    content = ([audio_part(observation["audio"][:length])] if length else []) + [
        text_part(observation["transcript"])
    ]
    return [
        {"role": "system", "content": gate_system_prompt(observation)},
        {"role": "user", "content": content},
    ]


class LLMGateAgent(ChatAgent):
    """A text model reading the transcript (access T, or A+T with the audio ignored)."""

    required_access = ("T", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([gate_messages(o) for o in observations])


class AudioLLMGateAgent(ChatAgent):
    """An audio-language model hearing the input (A: audio only; A+T: audio and transcript).
    Text-only inputs carry no audio; the model then gets the words alone."""

    required_access = ("A", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = hearing(client)

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([audio_gate_messages(o) for o in observations])
