"""The audio side of a family's training material (``agents.training_material``): what the audio
trainers (``training.llm.audio_sft``, ``training.llm.audio_grpo``) take from a family, and the row
form they share with it.

An audio-language model trains and is evaluated under ``AUDIO_ACCESS`` (A+T: it hears each input
and reads its words). A family declares, each optional:

* ``audio_chat_agent``: the agent that plays a saved audio model in evaluations, registered among
  the family's agents as ``audio_llm`` (``hear-gym eval --cell audio_llm@A+T``);
* ``audio_demos``: an ``AudioDemoSource``, its SFT demonstrations under A+T;
* ``audio_grpo_tasks``: ``AudioDecisionTask`` s by name, single-decision GRPO tasks whose two
  sides of a pair may differ in the audio alone; the family builds its pairs itself.

Rows. Every prompt is the family's audio agent's own chat, so a model is trained on exactly what
that agent later asks it. Arrow stores one type per column, so every message content is a list of
typed parts, and an audio part names its clip by key, ``{"type": "audio", "audio": "<key>"}``,
where the agent's chat carries the clip itself (``audio_parts``). The clips (16 kHz mono float32
arrays) travel beside the rows, by key (``Clips``). A table gives every part of a column every
key (a text part gets ``audio: None``); ``agents.llm.parts.template_messages`` takes them off
before a chat template reads a row. Paired GRPO swaps a row's ``prompt`` for its
``prompt_minus``, so the audio follows the prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.llm.parts import AUDIO, is_audio_part, text_part

AUDIO_ACCESS = "A+T"
SAMPLING_RATE = 16_000
Clips = Mapping[str, np.ndarray]
AudioRows = tuple[list[dict[str, Any]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class AudioDemoSource:
    """Audio SFT demonstrations under ``AUDIO_ACCESS``. ``settings`` is the trainer's settings
    object (``families``, ``env_options``, ``demo_limit``, ``seed``, ...).

    * ``check(settings)``: refuses settings the source cannot use (one-line ``ValueError``);
    * ``build(settings)``: (rows, clips) from the train split. A row has ``prompt`` (parts form),
      ``completion`` (the expert's reply, text), ``item_id`` and ``item_family``; ``demo_limit``
      of them drawn with ``seed`` when given."""

    check: Callable[[Any], None]
    build: Callable[[Any], AudioRows]


@dataclass(frozen=True)
class AudioDecisionTask:
    """A single-decision GRPO task for an audio-language model under ``AUDIO_ACCESS``.
    ``settings`` is the trainer's settings object (``families``, ``env_options``, ``paired``,
    ``item_limit``, ``seed``, ...).

    * ``check(settings)``: refuses settings the task cannot use (one-line ``ValueError``) and
      returns the env options the task trains and evaluates with;
    * ``build(settings, eos_token_ids)``: (rows, clips, reward). Rows have
      ``agents.training_material.DecisionTask``'s columns (paired, the ``*_minus`` columns hold
      the pair's other side; plain, each side is its own row), every prompt in parts form naming
      its own clip. The reward is a ``agents.llm.decision_reward.DecisionReward``;
    * ``eval_options(env_options)``: the env options of the held-out evaluation, which the
      family's ``audio_chat_agent`` plays."""

    check: Callable[[Any], dict[str, Any]]
    build: Callable[[Any, set[int]], tuple[list[dict[str, Any]], Clips, Any]]
    eval_options: Callable[[dict[str, Any]], dict[str, Any]] = dict


def audio_parts(messages: list[dict[str, Any]], audio_key: str) -> list[dict[str, Any]]:
    """The chat (an audio agent's, its audio part carrying the clip) with every content a list of
    typed parts, its audio part naming ``audio_key`` instead of carrying the clip."""

    def parts(content):
        if isinstance(content, str):
            return [text_part(content)]
        return [{"type": AUDIO, AUDIO: audio_key} if is_audio_part(p) else p for p in content]

    return [{"role": m["role"], "content": parts(m["content"])} for m in messages]


def audio_keys(prompt: list[dict[str, Any]]) -> list[str]:
    """The clips a parts-form prompt names, in order (none for a text-only input)."""
    return [p["audio"] for m in prompt for p in m["content"] if p["type"] == "audio"]
