"""Chat agents for Onset: the model is asked, at each prefix of the user's utterance, for one of
the env's six labels (``Wait`` keeps listening); the reply is parsed by the env's text grammar
(``gym.make("hear_gym/Onset-v0", actions="text")``: the label itself).

``OnsetChatAgent`` (``llm``) reads the words of the prefix on show (T, or A+T with the audio
ignored); ``OnsetAudioChatAgent`` (``audio_llm``) hears the prefix (A: the audio alone, its words
hidden; A+T: the audio and its words).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.llm.chat import ChatAgent, hearing
from agents.llm.clients import ChatClient
from agents.llm.parts import audio_part, text_part
from hear_gym.envs.onset.actions import ACTIONS, WAIT

ONSET_INSTRUCTION = (
    "You are a voice assistant listening to your user as they speak; you get the speech so far, "
    f"one growing prefix at a time. Reply {WAIT} to keep listening, or, once what you have heard "
    "supports it, the one action it calls for. Reply with exactly one of: " + ", ".join(ACTIONS) + "."
)


def onset_messages(observation: dict[str, Any]) -> list[dict[str, Any]]:
    """The text model's chat: the instruction, then the words of the prefix on show."""
    return [
        {"role": "system", "content": ONSET_INSTRUCTION},
        {"role": "user", "content": observation["text"]},
    ]


def audio_onset_messages(observation: dict[str, Any]) -> list[dict[str, Any]]:
    """The audio model's chat: the instruction, then the prefix's audio (its part carries the
    clip) and its words as the condition shows them."""
    clip = observation["audio"][: int(observation["audio_length"][0])]
    content = [audio_part(clip), text_part(observation["text"])]
    return [{"role": "system", "content": ONSET_INSTRUCTION}, {"role": "user", "content": content}]


class OnsetChatAgent(ChatAgent):
    """A text model reading the prefix's words."""

    required_access = ("T", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([onset_messages(o) for o in observations])


class OnsetAudioChatAgent(ChatAgent):
    """An audio-language model hearing the prefix (A: audio only; A+T: audio and words)."""

    required_access = ("A", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = hearing(client)

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([audio_onset_messages(o) for o in observations])
