"""``LLMAgent``: the P6a decision prompt (plus the condition's channel) -> a chat model -> a P6a
reply, which the env's text-action adapter parses (use ``gym.make(..., actions="text")``).
Stateless: the transcript in each observation is the whole context.

``act_batch`` sends several observations in one call (vector envs, batched generation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.hear2act.prompts import audio_messages, messages
from agents.llm.chat import ChatAgent, hearing
from agents.llm.clients import ChatClient

AUDIO_ASSISTANT = "spoken"  # an audio LLM acts as the spoken assistant: exactly P6a, no CLARIFY


class LLMAgent(ChatAgent):
    required_access = ("T", "T+S", "T+S^", "T+SER")

    def __init__(self, client: ChatClient, assistant: str = "text") -> None:
        self.client, self.assistant = client, assistant

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([messages(o, self.assistant) for o in observations])


class AudioLLMAgent(ChatAgent):
    """An audio-language model acting on the current user turn's audio (A, A+T)."""

    required_access = ("A", "A+T")

    def __init__(self, client: ChatClient, assistant: str = AUDIO_ASSISTANT) -> None:
        self.client, self.assistant = hearing(client), assistant

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        if any("audio" not in o for o in observations):
            raise KeyError("AudioLLMAgent needs an audio condition (access 'A' or 'A+T')")
        return self.client.complete([audio_messages(o, self.assistant) for o in observations])
