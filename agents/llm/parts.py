"""Chat messages with audio, in the form the ecosystem's chat templates and servers read.

A message's content is a string or a list of typed parts. An audio part names its clip, as the
hub's templates (Qwen2-Audio, Qwen2.5-Omni: a part with an ``audio`` or ``audio_url`` key is
audio) and transformers' processors expect: ``{"type": "audio", "audio": <16 kHz mono float
array>}``. Training rows name the clip by key instead (``agents.audio_material``), so that a
dataset stores text.

Templates test which keys a part has, so a part must carry only its own: ``template_messages``
drops the null keys a table gives every part (``datasets.Dataset.from_list`` unifies the keys of
the parts of a column, so a text part gets ``audio: None`` and would render as an audio
placeholder).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

AUDIO = "audio"
SAMPLING_RATE = 16_000  # every clip hear_gym renders: 16 kHz mono float32


def audio_part(clip: np.ndarray) -> dict[str, Any]:
    """The part of a message that carries ``clip`` (16 kHz mono float32)."""
    return {"type": AUDIO, AUDIO: np.asarray(clip, dtype=np.float32)}


def text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def own_keys(part: dict[str, Any]) -> dict[str, Any]:
    """The part without the null keys a table added to it."""
    return {k: v for k, v in part.items() if v is not None}


def template_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat as a chat template should see it: every part with its own keys only."""
    return [
        {
            **m,
            "content": m["content"] if isinstance(m["content"], str) else [own_keys(p) for p in m["content"]],
        }
        for m in messages
    ]


def is_audio_part(part: dict[str, Any]) -> bool:
    return part.get("type") == AUDIO or part.get(AUDIO) is not None


def audio_parts_of(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The audio parts of a chat, in order."""
    return [
        p for m in messages if not isinstance(m["content"], str) for p in m["content"] if is_audio_part(p)
    ]


def clips_of(messages: Sequence[dict[str, Any]]) -> list[np.ndarray]:
    """The clips a chat carries, in order; an audio part without its clip is an error (a template
    would render a placeholder no audio fills)."""
    clips = []
    for part in audio_parts_of(messages):
        clip = part.get(AUDIO)
        if not isinstance(clip, np.ndarray):
            raise ValueError(
                'an audio part must carry its clip: {"type": "audio", "audio": <16 kHz float array>}, '
                f"got keys {sorted(own_keys(part))}"
            )
        clips.append(clip)
    return clips


def has_audio(messages: Sequence[dict[str, Any]]) -> bool:
    return bool(audio_parts_of(messages))
