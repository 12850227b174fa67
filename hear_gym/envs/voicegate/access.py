"""VoiceGate access conditions as wrappers.

The base env is ``T`` (transcript and tool inventory). ``A+T`` adds the input's audio
(``item_audio``, a ``hear_gym.wrappers.audio.AudioObservation``: ``audio``, float32 16 kHz,
padded to ``MAX_AUDIO_SECONDS`` with the continuation of the input's own room tone, so that no
part of the buffer is digital silence, and ``audio_length``, where the input ends (shape (1,)),
0 for text-only inputs, whose buffer is all zeros; the synthesis manifest goes to ``info["manifest"]``, ``{}`` for text-only inputs).
``A`` (what the paper's Audio LLMs get) is ``A+T`` with the transcript of an input with audio
replaced by ``[speech]``; text-only inputs keep their words, they have nothing else.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.envs.voicegate.scenes import room_tone
from hear_gym.wrappers.access import HiddenWords, apply_access_table
from hear_gym.wrappers.audio import AudioObservation


def _item_clip(env: gym.Env) -> tuple[np.ndarray | None, dict]:
    rendered = env.unwrapped.item_audio()
    if rendered is None:  # a text-only input
        return None, {"manifest": {}}
    return rendered[0], {"manifest": rendered[1]}


def _room_tone(env: gym.Env) -> np.ndarray:
    return room_tone(env.unwrapped.item, MAX_AUDIO_SAMPLES)


def item_audio(env: gym.Env) -> gym.Env:
    return AudioObservation(env, _item_clip, _room_tone)


def hide_user_words(env: gym.Env) -> gym.Env:
    """An input with audio shows ``[speech]`` for its words; a text-only input keeps them."""
    return HiddenWords(env, keys=("transcript",), only_with_audio=True)


ACCESS_CONDITIONS = {
    "A+T": item_audio,
    "A": lambda env: hide_user_words(item_audio(env)),
    "T": lambda env: env,
}


def apply_access(env: gym.Env, access: str) -> gym.Env:
    return apply_access_table(env, access, ACCESS_CONDITIONS, "VoiceGate")
