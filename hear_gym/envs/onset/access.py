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

from hear_gym.wrappers.access import HiddenWords, apply_access_table
from hear_gym.wrappers.audio import AudioObservation


def _prefix_clip(env: gym.Env) -> tuple[np.ndarray, dict]:
    return env.unwrapped.prefix_audio()


def prefix_audio(env: gym.Env) -> gym.Env:
    return AudioObservation(env, _prefix_clip)


def hide_user_words(env: gym.Env) -> gym.Env:
    """The prefix's text becomes ``[speech]``."""
    return HiddenWords(env, keys=("text",))


ACCESS_CONDITIONS = {
    "A": lambda env: hide_user_words(prefix_audio(env)),
    "A+T": prefix_audio,
    "T": lambda env: env,
}


def apply_access(env: gym.Env, access: str) -> gym.Env:
    return apply_access_table(env, access, ACCESS_CONDITIONS, "Onset")
