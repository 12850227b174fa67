"""Audio observations: what every family's audio access conditions add to a Dict observation.

``AudioObservation(env, clip, fill=None)`` adds ``audio`` (float32, 16 kHz, ``MAX_AUDIO_SAMPLES``
long: the clip, cut there, then ``fill``) and ``audio_length`` (the clip's samples, shape (1,):
SB3 takes no 0-d Boxes) after reset and after each step. The family says what is heard:
``clip(env)`` returns ``(waveform, info entries)`` for the moment (waveform ``None``: nothing to
hear, an all-zero buffer of length 0), and ``fill(env)`` what fills the buffer after a clip
(default digital silence). Hidden words (the audio-only conditions) are an observation transform
of the family's own (``gymnasium.wrappers.TransformObservation``): what counts as the speaker's
words differs between families.

Under the feature observation the dict observation never leaves the wrapper stack, so the make
pipeline (``hear_gym.wrappers.stack``) turns the padding off (``unpadded``): ``audio`` is then the
clip itself, cut at ``MAX_AUDIO_SAMPLES`` (the family's own array, read-only where it is cached,
never a copy), not a fresh 12 s buffer; the features read only its first ``audio_length``
samples either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES, audio_spaces

Clip = Callable[[gym.Env], tuple[np.ndarray | None, dict[str, Any]]]
Fill = Callable[[gym.Env], np.ndarray]


class AudioObservation(gym.Wrapper):
    def __init__(self, env: gym.Env, clip: Clip, fill: Fill | None = None) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError("AudioObservation needs a Dict observation space")
        self.observation_space = spaces.Dict({**env.observation_space.spaces, **audio_spaces()})
        self.clip, self.fill = clip, fill
        self.padded = True  # False: hand out the clip itself (see the module docstring)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._add(obs, info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        obs, info = self._add(obs, info)
        return obs, reward, terminated, truncated, info

    def _add(self, obs: dict, info: dict) -> tuple[dict, dict]:
        waveform, extra = self.clip(self.env)
        # A new buffer every time: observations must not share memory (vector envs and agents
        # keep them), so a buffer is never reused. Silence after the clip: np.zeros gets zeroed
        # pages lazily, so the cost is the speech itself, not the padding. A fill: the clip and
        # the fill's tail joined in one pass into fresh memory, nothing zeroed first.
        length = 0 if waveform is None else min(len(waveform), MAX_AUDIO_SAMPLES)
        if not self.padded:
            buffer = np.zeros(0, dtype=np.float32) if waveform is None else waveform[:length]
        elif waveform is None or self.fill is None:
            buffer = np.zeros(MAX_AUDIO_SAMPLES, dtype=np.float32)
            if waveform is not None:
                buffer[:length] = waveform[:length]
        else:
            tail = self.fill(self.env)[length:MAX_AUDIO_SAMPLES]
            buffer = np.concatenate((waveform[:length], tail), dtype=np.float32)
        audio = {"audio": buffer, "audio_length": np.array([length], dtype=np.int64)}
        return {**obs, **audio}, {**info, **extra}


def unpadded(env: gym.Env) -> gym.Env:
    """``env`` with padding turned off in every ``AudioObservation`` of its wrapper stack, for a
    stack whose dict observation is read only by a wrapper above it (the feature observation)."""
    layer = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, AudioObservation):
            layer.padded = False
        layer = layer.env
    return env
