"""What every family's feature observation (``observation="features"``, a Dict of 1-D float32
Boxes for Stable-Baselines3) shares: ``FeatureWrapper`` maps each reset's and step's observation
through ``features(obs, info)`` (the info too, since what fixes a clip's audio, the item and its
turn or the clip's content address, is there), and keeps audio features in a bounded LRU, so an
episode's clip is analysed once however often it is on show."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

import gymnasium as gym
import numpy as np

from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.speech.features import FEATURE_NAMES, N_MELS, pooled_log_mel, prosodic_features

BIG = np.float32(1e4)  # feature values are clipped to +-BIG, so every Box bound is finite
PROSODY_AND_MEL_NAMES: tuple[str, ...] = (
    *FEATURE_NAMES,
    *(f"log_mel_mean_{i}" for i in range(N_MELS)),
    *(f"log_mel_std_{i}" for i in range(N_MELS)),
)


def prosody_and_mel(waveform: np.ndarray, sample_rate: int = AUDIO_RATE) -> np.ndarray:
    """Prosodic features and pooled log-mel of one clip (float32, ``PROSODY_AND_MEL_NAMES``)."""
    return np.concatenate(
        [prosodic_features(waveform, sample_rate), pooled_log_mel(waveform, sample_rate)]
    ).astype(np.float32)


class FeatureWrapper(gym.Wrapper):
    """A family's ``FeatureObservation`` sets ``observation_space`` and implements ``features``;
    ``hears`` says whether the wrapped condition has audio; ``kept(key, compute)`` returns
    ``compute()`` clipped to float32, computed once per ``key`` among the last ``kept_clips``."""

    def __init__(self, env: gym.Env, kept_clips: int) -> None:
        super().__init__(env)
        self.hears = "audio" in env.observation_space.spaces
        self._kept: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._kept_clips = kept_clips

    def features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self.features(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.features(obs, info), reward, terminated, truncated, info

    def kept(self, key: Hashable, compute: Callable[[], np.ndarray]) -> np.ndarray:
        if key in self._kept:
            self._kept.move_to_end(key)
        else:
            self._kept[key] = np.clip(compute(), -BIG, BIG).astype(np.float32)
            if len(self._kept) > self._kept_clips:
                self._kept.popitem(last=False)
        return self._kept[key].copy()
