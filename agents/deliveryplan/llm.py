"""The DeliveryPlan chat agent: one instruction for every model, the case side's prompt from the
observation, and a reply in the env's strict JSON text format
(``gym.make("hear_gym/DeliveryPlan-v0", actions="text")``); ``AudioLLMPlanAgent``
(``audio_llm``) hears the source record under A and A+T. The SFT demonstrations and the GRPO
rows are built with the same ``plan_messages``, so a model is trained on exactly what it is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.llm.chat import ChatAgent, hearing
from agents.llm.clients import ChatClient
from agents.llm.parts import audio_part, text_part
from hear_gym.envs.deliveryplan.plan import FIELD_LEVELS, PLAN_FIELDS

PLAN_INSTRUCTION = (
    "Plan how to deliver the utterance from the evidence. Cite the cue ids of every record your "
    "plan relies on. Reply with one JSON object and nothing else: "
    '{"evidence": [cue ids], "plan": {'
    + ", ".join(f'"{name}": {"|".join(FIELD_LEVELS[name])}' for name in PLAN_FIELDS)
    + ', "emphasis": [word indices]}}'
)


def plan_messages(observation: dict[str, Any]) -> list[dict[str, str]]:
    """The text model's chat: the instruction, then the case side's prompt."""
    return [
        {"role": "system", "content": PLAN_INSTRUCTION},
        {"role": "user", "content": observation["text"]},
    ]


def audio_plan_messages(observation: dict[str, Any]) -> list[dict[str, Any]]:
    """The audio model's chat: the instruction, the source record as speech (its part carries the
    clip), then the case side's prompt (under A without the record's labels, which it hears)."""
    clip = observation["audio"][: int(observation["audio_length"][0])]
    return [
        {"role": "system", "content": PLAN_INSTRUCTION},
        {"role": "user", "content": [audio_part(clip), text_part(observation["text"])]},
    ]


class LLMPlanAgent(ChatAgent):
    """A text model reading the prompt (T: labels as text; A+T with the audio ignored)."""

    required_access = ("T", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([plan_messages(o) for o in observations])


class AudioLLMPlanAgent(ChatAgent):
    """An audio-language model hearing the source record (A: its labels only heard; A+T: heard
    and read)."""

    required_access = ("A", "A+T")

    def __init__(self, client: ChatClient) -> None:
        self.client = hearing(client)

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([audio_plan_messages(o) for o in observations])
