"""Numeric views of an Onset prefix: the frozen speech representation, the scalar acoustics
control, and the SB3-ready feature observation (``observation="features"``).

* ``prefix_representation``: our frozen speech representation of a prefix, the 12 prosodic
  features (Praat) and the mean and standard deviation of 64 log-mel bands over its frames
  (140 values; both cached by content in ``hear_gym.speech.features``). It plays the role of the
  paper's mean-pooled WavLM vector.
* ``scalar_acoustics``: the paper's scalar-audio control, ``SCALAR_NAMES``.

``FeatureObservation`` is a Dict of 1-D float32 Boxes built from the access condition's
observation, so each condition sees exactly what it grants: ``prefix`` (one-hot position),
``words`` (the token-fraction text as ``WORD_BINS`` hashed word bits; under A the placeholder's),
``acoustic`` (``prefix_representation`` of the audio on show; A and A+T only), ``action_mask``.
The representation is computed from the audio in the observation and kept per prefix (episode id
and prefix index, which fix the audio), so a prefix seen before costs no hashing of its waveform.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.core.text import hashed_words
from hear_gym.envs.onset.actions import N_ACTIONS
from hear_gym.envs.onset.groups.model import N_PREFIXES
from hear_gym.wrappers.features import BIG, PROSODY_AND_MEL_NAMES, FeatureWrapper, prosody_and_mel

WORD_BINS = 128
REPRESENTATION_NAMES = PROSODY_AND_MEL_NAMES
SCALAR_NAMES: tuple[str, ...] = ("duration_s", "rms", "mean_abs", "zero_crossing_rate", "crest_factor")
# Prefix representations a FeatureObservation keeps (560 floats each): every prefix of a test
# split's 320 episodes is 1,600.
KEPT_REPRESENTATIONS = 4096


def prefix_representation(waveform: np.ndarray, sample_rate: int = AUDIO_RATE) -> np.ndarray:
    """Prosodic features and pooled log-mel of one prefix (float32, ``REPRESENTATION_NAMES``)."""
    return prosody_and_mel(waveform, sample_rate)


def scalar_acoustics(waveform: np.ndarray, sample_rate: int = AUDIO_RATE) -> np.ndarray:
    """Duration (s), RMS, mean absolute amplitude, zero-crossing rate (per sample) and crest
    factor (peak / RMS) of one prefix."""
    x = np.asarray(waveform, dtype=np.float64)
    rms = float(np.sqrt(np.mean(x**2))) if len(x) else 0.0
    signs = np.signbit(x)
    return np.array(
        [
            len(x) / sample_rate,
            rms,
            float(np.mean(np.abs(x))) if len(x) else 0.0,
            float(np.mean(signs[1:] != signs[:-1])) if len(x) > 1 else 0.0,
            float(np.max(np.abs(x)) / rms) if rms > 0 else 0.0,
        ],
        dtype=np.float32,
    )


class FeatureObservation(FeatureWrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, KEPT_REPRESENTATIONS)
        leaves = {
            "prefix": spaces.Box(0.0, 1.0, (N_PREFIXES,), np.float32),
            "words": spaces.Box(0.0, 1.0, (WORD_BINS,), np.float32),
        }
        if self.hears:
            leaves["acoustic"] = spaces.Box(-BIG, BIG, (len(REPRESENTATION_NAMES),), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)
        self.observation_space = spaces.Dict(leaves)

    def features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        position = np.zeros(N_PREFIXES, dtype=np.float32)
        position[int(obs["prefix_index"][0])] = 1.0
        out = {"prefix": position, "words": hashed_words(obs["text"], WORD_BINS)}
        if self.hears:
            wave = obs["audio"][: int(obs["audio_length"][0])]
            # the item and the prefix fix the prefix's audio
            out["acoustic"] = self.kept(
                (info["item_id"], info["prefix_index"]), lambda: prefix_representation(wave)
            )
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out
