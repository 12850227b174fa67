"""VoiceGate's numeric observation for Stable-Baselines3 (``observation="features"``).

A Dict of 1-D float32 Boxes, built from the dict observation of the access condition, so each
condition sees exactly what it grants:

======  =====================================================================================
T       ``words`` (the transcript as ``WORD_BINS`` hashed word bits), ``action_mask``
A+T     ``words``, ``has_audio`` (1, or 0 for a text-only input), ``change`` (``GATE_FEATURES``
        of the input's audio: speaker and room change across its longest pause; zeros for a
        text-only input), ``action_mask``
A       as A+T; an input with audio shows the transcript ``[speech]``, so its ``words`` are those
        of that placeholder
======  =====================================================================================

The change features are computed from the audio in the observation (never from the manifest)
and cached per rendered input.
"""

from __future__ import annotations

from collections import OrderedDict

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import hashed_words
from hear_gym.envs.voicegate.actions import N_ACTIONS
from hear_gym.speech.change_features import GATE_FEATURES, gate_features

WORD_BINS = 256
_BIG = np.float32(1e4)
_CACHE_SIZE = 4096


class FeatureObservation(gym.Wrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.hears = "audio" in env.observation_space.spaces
        leaves = {"words": spaces.Box(0.0, 1.0, (WORD_BINS,), np.float32)}
        if self.hears:
            leaves["has_audio"] = spaces.Box(0.0, 1.0, (1,), np.float32)
            leaves["change"] = spaces.Box(-_BIG, _BIG, (len(GATE_FEATURES),), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)
        self.observation_space = spaces.Dict(leaves)
        self._change: OrderedDict[str, np.ndarray] = OrderedDict()

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._features(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._features(obs, info), reward, terminated, truncated, info

    def _features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        out = {"words": hashed_words(obs["transcript"], WORD_BINS)}
        if self.hears:
            length = int(obs["audio_length"][0])
            out["has_audio"] = np.array([float(length > 0)], dtype=np.float32)
            out["change"] = (
                self._change_features(obs["audio"][:length], info)
                if length
                else np.zeros(len(GATE_FEATURES), dtype=np.float32)
            )
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out

    def _change_features(self, wave: np.ndarray, info: dict) -> np.ndarray:
        key = info["manifest"]["pcm16_sha256"]  # the rendered input's content address
        if key not in self._change:
            self._change[key] = np.clip(gate_features(wave), -_BIG, _BIG).astype(np.float32)
            if len(self._change) > _CACHE_SIZE:
                self._change.popitem(last=False)
        return self._change[key].copy()
