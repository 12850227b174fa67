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
and cached per rendered input; the word bits are cached per transcript.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import hashed_words
from hear_gym.envs.voicegate.actions import N_ACTIONS
from hear_gym.speech.change_features import GATE_FEATURES, gate_features
from hear_gym.wrappers.features import BIG, FeatureWrapper

WORD_BINS = 256
_CACHE_SIZE = 4096


class FeatureObservation(FeatureWrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, _CACHE_SIZE)
        leaves = {"words": spaces.Box(0.0, 1.0, (WORD_BINS,), np.float32)}
        if self.hears:
            leaves["has_audio"] = spaces.Box(0.0, 1.0, (1,), np.float32)
            leaves["change"] = spaces.Box(-BIG, BIG, (len(GATE_FEATURES),), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)
        self.observation_space = spaces.Dict(leaves)

    def features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        # an input's words are shown at its reset and again at its (terminal) step
        transcript = obs["transcript"]
        out = {"words": self.kept(("words", transcript), lambda: hashed_words(transcript, WORD_BINS))}
        if self.hears:
            length = int(obs["audio_length"][0])
            out["has_audio"] = np.array([float(length > 0)], dtype=np.float32)
            out["change"] = (
                # the rendered input's content address fixes its audio
                self.kept(info["manifest"]["pcm16_sha256"], lambda: gate_features(obs["audio"][:length]))
                if length
                else np.zeros(len(GATE_FEATURES), dtype=np.float32)
            )
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out
