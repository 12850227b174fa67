"""The SB3-ready feature observation of Ambiguity (``observation="features"``).

A Dict of 1-D float32 Boxes built from the access condition's observation, so each condition
sees exactly what it grants:

* ``question`` and ``transcript``: hashed bags of tokens (``TEXT_BINS`` and ``TRANSCRIPT_BINS``
  presence bits); tokens are English words, Mandarin characters and punctuation marks (so ``T``
  keeps the punctuation ``T-nopunct`` drops);
* ``turn``: the turn, one-hot over ``MAX_TURNS``;
* ``acoustic`` (A and A+T only): the turn's 12 prosodic features (Praat) and the mean and
  standard deviation of 64 log-mel bands (``hear_gym.speech.features``, cached by content), kept
  per episode and turn (which fix the audio);
* ``action_mask``: the options the question has.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from functools import lru_cache

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.envs.ambiguity.env import MAX_TURNS
from hear_gym.envs.ambiguity.items.model import MAX_OPTIONS
from hear_gym.speech.features import FEATURE_NAMES, N_MELS, pooled_log_mel, prosodic_features

TEXT_BINS, TRANSCRIPT_BINS = 256, 256
N_ACOUSTIC = len(FEATURE_NAMES) + 2 * N_MELS
KEPT_REPRESENTATIONS = 2048
_BIG = np.float32(1e4)
_TOKEN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]|[?!,.\uff0c\u3002\uff1f\uff01]")


@lru_cache(maxsize=1 << 16)
def _bin(token: str, bins: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % bins


def token_bits(text: str, bins: int) -> np.ndarray:
    """Presence bits of the text's tokens hashed into ``bins`` (BLAKE2b: the same in every process)."""
    out = np.zeros(bins, dtype=np.float32)
    out[[_bin(token, bins) for token in _TOKEN.findall(text.lower())]] = 1.0
    return out


def acoustic_representation(waveform: np.ndarray) -> np.ndarray:
    return np.concatenate(
        [prosodic_features(waveform, AUDIO_RATE), pooled_log_mel(waveform, AUDIO_RATE)]
    ).astype(np.float32)


class FeatureObservation(gym.Wrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.hears = "audio" in env.observation_space.spaces
        leaves = {
            "question": spaces.Box(0.0, 1.0, (TEXT_BINS,), np.float32),
            "transcript": spaces.Box(0.0, 1.0, (TRANSCRIPT_BINS,), np.float32),
            "turn": spaces.Box(0.0, 1.0, (MAX_TURNS,), np.float32),
        }
        if self.hears:
            leaves["acoustic"] = spaces.Box(-_BIG, _BIG, (N_ACOUSTIC,), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (MAX_OPTIONS,), np.float32)
        self.observation_space = spaces.Dict(leaves)
        self._acoustic: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._features(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._features(obs, info), reward, terminated, truncated, info

    def _features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        turn = np.zeros(MAX_TURNS, dtype=np.float32)
        turn[int(obs["turn"][0])] = 1.0
        out = {
            "question": token_bits(obs["question"], TEXT_BINS),
            "transcript": token_bits(obs["transcript"], TRANSCRIPT_BINS),
            "turn": turn,
        }
        if self.hears:
            out["acoustic"] = self._acoustic_features(obs, info)
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out

    def _acoustic_features(self, obs: dict, info: dict) -> np.ndarray:
        key = (info["item_id"], int(obs["turn"][0]))  # what fixes the turn's audio
        if key not in self._acoustic:
            wave = obs["audio"][: int(obs["audio_length"][0])]
            self._acoustic[key] = np.clip(acoustic_representation(wave), -_BIG, _BIG).astype(np.float32)
            if len(self._acoustic) > KEPT_REPRESENTATIONS:
                self._acoustic.popitem(last=False)
        else:
            self._acoustic.move_to_end(key)
        return self._acoustic[key].copy()
