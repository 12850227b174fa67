"""The SB3-ready feature observation of Ambiguity (``observation="features"``).

A Dict of 1-D float32 Boxes built from the access condition's observation, so each condition
sees exactly what it grants:

* ``question`` and ``transcript``: hashed bags of tokens (``TEXT_BINS`` and ``TRANSCRIPT_BINS``
  presence bits); tokens are English words, Mandarin characters and punctuation marks (so ``T``
  keeps the punctuation ``T-nopunct`` drops); kept per text, as episodes show the same ones again;
* ``turn``: the turn, one-hot over ``MAX_TURNS``;
* ``acoustic`` (A and A+T only): the turn's 12 prosodic features (Praat) and the mean and
  standard deviation of 64 log-mel bands (``hear_gym.speech.features``, cached by content), kept
  per episode and turn (which fix the audio);
* ``action_mask``: the options the question has.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.envs.ambiguity.env import MAX_TURNS
from hear_gym.envs.ambiguity.items.model import MAX_OPTIONS
from hear_gym.wrappers.features import BIG, PROSODY_AND_MEL_NAMES, FeatureWrapper, prosody_and_mel

TEXT_BINS, TRANSCRIPT_BINS = 256, 256
N_ACOUSTIC = len(PROSODY_AND_MEL_NAMES)
KEPT_REPRESENTATIONS = 16384  # questions, transcripts and turn clips (~0.6-1.1 kB each)
_TOKEN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]|[?!,.\uff0c\u3002\uff1f\uff01]")


@lru_cache(maxsize=1 << 16)
def _bin(token: str, bins: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % bins


def token_bits(text: str, bins: int) -> np.ndarray:
    """Presence bits of the text's tokens hashed into ``bins`` (BLAKE2b: the same in every process)."""
    out = np.zeros(bins, dtype=np.float32)
    out[[_bin(token, bins) for token in _TOKEN.findall(text.lower())]] = 1.0
    return out


class FeatureObservation(FeatureWrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, KEPT_REPRESENTATIONS)
        leaves = {
            "question": spaces.Box(0.0, 1.0, (TEXT_BINS,), np.float32),
            "transcript": spaces.Box(0.0, 1.0, (TRANSCRIPT_BINS,), np.float32),
            "turn": spaces.Box(0.0, 1.0, (MAX_TURNS,), np.float32),
        }
        if self.hears:
            leaves["acoustic"] = spaces.Box(-BIG, BIG, (N_ACOUSTIC,), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (MAX_OPTIONS,), np.float32)
        self.observation_space = spaces.Dict(leaves)

    def features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        turn = np.zeros(MAX_TURNS, dtype=np.float32)
        turn[int(obs["turn"][0])] = 1.0
        # an episode shows the same question and transcripts at every replay: their bits are kept
        question, transcript = obs["question"], obs["transcript"]
        out = {
            "question": self.kept(("question", question), lambda: token_bits(question, TEXT_BINS)),
            "transcript": self.kept(
                ("transcript", transcript), lambda: token_bits(transcript, TRANSCRIPT_BINS)
            ),
            "turn": turn,
        }
        if self.hears:
            wave = obs["audio"][: int(obs["audio_length"][0])]
            # the episode and its turn fix the turn's audio
            out["acoustic"] = self.kept((info["item_id"], int(obs["turn"][0])), lambda: prosody_and_mel(wave))
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out
