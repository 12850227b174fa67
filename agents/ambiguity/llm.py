"""The chat agent for Ambiguity: the same instruction for every model, then the transcript so far
and the question with its lettered options; the reply is parsed by the env's strict text grammar
(``gym.make("hear_gym/Ambiguity-v0", actions="text")``: the option's letter).

The paper prompts each phenomenon with its own instruction (Section 3.2.2); here that instruction
is the first line of the observation's ``question``, and ``AMBIGUITY_INSTRUCTION`` adds only the
answer format. A text model reads the transcript (``T``, ``T-nopunct`` or the words of ``A+T``);
an audio-language model (``AmbiguityAudioChatAgent``, ``audio_llm``) hears the turn's audio, with
its words under ``A+T`` and the transcript's ``[speech]`` placeholders under ``A``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.llm.chat import ChatAgent, hearing
from agents.llm.clients import ChatClient
from agents.llm.parts import audio_part, text_part

AMBIGUITY_INSTRUCTION = (
    "You are a spoken dialogue assistant. You get what the user said and a question about it with "
    "lettered options. Reply with the letter of the one right option and nothing else."
)


def ambiguity_messages(observation: dict[str, Any]) -> list[dict[str, str]]:
    """The text model's chat; agents and the SFT/GRPO trainers build their prompts here."""
    return [
        {"role": "system", "content": AMBIGUITY_INSTRUCTION},
        {"role": "user", "content": f"{observation['transcript']}\n\n{observation['question']}"},
    ]


def audio_ambiguity_messages(observation: dict[str, Any]) -> list[dict[str, Any]]:
    """The audio model's chat: the instruction, the turn's audio (its part carries the clip), then
    the transcript as the condition shows it (words under A+T, placeholders under A) and the
    question."""
    length = int(observation["audio_length"][0])
    text = f"{observation['transcript']}\n\n{observation['question']}"
    return [
        {"role": "system", "content": AMBIGUITY_INSTRUCTION},
        {"role": "user", "content": [audio_part(observation["audio"][:length]), text_part(text)]},
    ]


class AmbiguityChatAgent(ChatAgent):
    """A text model reading the transcript."""

    required_access = ("T", "T-nopunct", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([ambiguity_messages(o) for o in observations])


class AmbiguityAudioChatAgent(ChatAgent):
    """An audio-language model hearing the user's turn (A: audio only; A+T: audio and words)."""

    required_access = ("A", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = hearing(client)

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([audio_ambiguity_messages(o) for o in observations])
