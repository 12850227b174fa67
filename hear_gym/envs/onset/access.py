"""Onset access conditions as wrappers.

The base env is ``T`` (the authored token-fraction text of the prefix). ``A+T`` adds the prefix's
audio (``hear_gym.wrappers.audio.AudioObservation``: ``audio``, float32 16 kHz, the prefix and
then digital silence, and ``audio_length``, the prefix's samples; the rest of the trajectory is
never in the buffer). ``A`` is ``A+T`` with the text replaced by ``[speech]``: only the audio and
the prefix position remain.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TransformObservation

from hear_gym.core.text import SPEECH_PLACEHOLDER
from hear_gym.wrappers.audio import AudioObservation

ONSET_ACCESS = ("A", "A+T", "T")


def _prefix_clip(env: gym.Env) -> tuple[np.ndarray, dict]:
    return env.unwrapped.prefix_audio()


def prefix_audio(env: gym.Env) -> gym.Env:
    return AudioObservation(env, _prefix_clip)


def _hide_words(obs: dict) -> dict:
    return {**obs, "text": SPEECH_PLACEHOLDER}


def hide_text(env: gym.Env) -> gym.Env:
    # a module-level function: Gymnasium compares wrapper specs (kwargs included) on re-creation
    return TransformObservation(env, _hide_words, env.observation_space)


_WRAPPERS = {"A+T": (prefix_audio,), "A": (prefix_audio, hide_text), "T": ()}


def apply_onset_access(env: gym.Env, access: str) -> gym.Env:
    if access not in _WRAPPERS:
        raise ValueError(f"Onset access must be one of {ONSET_ACCESS}, got {access!r}")
    for wrapper in _WRAPPERS[access]:
        env = wrapper(env)
    return env
