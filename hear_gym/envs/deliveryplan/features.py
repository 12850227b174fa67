"""The SB3-ready feature observation of DeliveryPlan (``observation="features"``): a Dict of 1-D
float32 Boxes built from the access condition's observation, so each condition sees only what it
grants.

There is no side indicator: the expected plan depends only on the evidence on show, never on
whether it is the original or the edit, so a policy is not given a feature it could use to learn
side-specific mappings (held-out keys appear in training only as edits of their sibling keys).

* ``words``: the prompt's words hashed into ``WORD_BINS`` presence bits, cue ids left out (they
  are per-case hashes and carry no meaning across cases); under ``T`` and ``A+T`` the source
  label's words are among them, under ``A`` they are not;
* ``acoustic``: the prosodic features (``hear_gym.speech.features``) of the source recording
  (``A`` and ``A+T`` only), kept per (case, side), which fixes the audio;
* ``action_mask``: over the ``discrete`` catalogue.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import hashed_words
from hear_gym.envs.deliveryplan.actions import N_CATALOGUE
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features

WORD_BINS = 256  # the suite's 54 prompt words (cue ids left out) fall in distinct bins
CUE_ID = re.compile(r"\[[a-z]{3}-[0-9a-f]{6}\]")
_BIG = np.float32(1e4)
KEPT_CLIPS = 512  # two sides of every case, with room


def prompt_words(text: str) -> np.ndarray:
    return hashed_words(CUE_ID.sub(" ", text), WORD_BINS)


class FeatureObservation(gym.Wrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.hears = "audio" in env.observation_space.spaces
        leaves = {"words": spaces.Box(0.0, 1.0, (WORD_BINS,), np.float32)}
        if self.hears:
            leaves["acoustic"] = spaces.Box(-_BIG, _BIG, (len(FEATURE_NAMES),), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (N_CATALOGUE,), np.float32)
        self.observation_space = spaces.Dict(leaves)
        self._acoustic: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._features(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._features(obs, info), reward, terminated, truncated, info

    def _features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        out = {"words": prompt_words(obs["text"])}
        if self.hears:
            out["acoustic"] = self._acoustic_features(obs, info)
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out

    def _acoustic_features(self, obs: dict, info: dict) -> np.ndarray:
        key = (info["item_id"], info["step_index"])
        if key not in self._acoustic:
            wave = obs["audio"][: int(obs["audio_length"][0])]
            self._acoustic[key] = np.clip(prosodic_features(wave), -_BIG, _BIG).astype(np.float32)
            if len(self._acoustic) > KEPT_CLIPS:
                self._acoustic.popitem(last=False)
        else:
            self._acoustic.move_to_end(key)
        return self._acoustic[key].copy()
