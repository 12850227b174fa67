"""The SB3-ready feature observation of DeliveryPlan (``observation="features"``): a Dict of 1-D
float32 Boxes built from the access condition's observation, so each condition sees only what it
grants.

There is no side indicator: the expected plan depends only on the evidence on show, never on
whether it is the original or the edit, so a policy is not given a feature it could use to learn
side-specific mappings (held-out keys appear in training only as edits of their sibling keys).

* ``words``: the words of the prompt's other lines (utterance, role, scene, the utterance record)
  hashed into ``WORD_BINS`` presence bits, cue ids left out (they are drawn per episode and
  carry no meaning); kept per (case, side), which fixes them;
* ``recordings``: one such bag per listed recording, in listing order (``N_RECORDINGS`` x
  ``WORD_BINS``): its statement, and under ``T`` and ``A+T`` its labels and voice. Which bag is
  the take of the utterance, whose labels decide the plan, is for the policy to match (the
  ``discrete`` actions cite a recording by the same place);
* ``acoustic``: the prosodic features (``hear_gym.speech.features``) of the source recording
  (``A`` and ``A+T`` only), kept per (case, side), which fixes the audio;
* ``action_mask``: over the ``discrete`` catalogue.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import hashed_words
from hear_gym.envs.deliveryplan.actions import N_CATALOGUE, N_RECORDINGS
from hear_gym.envs.deliveryplan.cases import SOURCE_KIND
from hear_gym.envs.deliveryplan.display import CUE_ID
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features
from hear_gym.wrappers.features import BIG, FeatureWrapper

WORD_BINS = 256  # the suite's prompt words (cue ids left out) fall in distinct bins
# kept leaves: the word bits, recording bits and acoustic features of both sides of every case
# (600, the recordings in either order), with room
KEPT_LEAVES = 1024
_RECORDING_LINE = f"] {SOURCE_KIND}: "


def prompt_words(text: str) -> np.ndarray:
    """The bag of the prompt's lines other than the recordings."""
    lines = [line for line in text.splitlines() if _RECORDING_LINE not in line]
    return hashed_words(CUE_ID.sub(" ", "\n".join(lines)), WORD_BINS)


def recording_words(text: str) -> np.ndarray:
    """One bag per listed recording, in listing order, concatenated."""
    lines = [line for line in text.splitlines() if _RECORDING_LINE in line]
    if len(lines) != N_RECORDINGS:
        raise ValueError(f"a DeliveryPlan prompt lists {N_RECORDINGS} recordings, got {len(lines)}")
    return np.concatenate([hashed_words(CUE_ID.sub(" ", line), WORD_BINS) for line in lines])


class FeatureObservation(FeatureWrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, KEPT_LEAVES)
        leaves = {
            "words": spaces.Box(0.0, 1.0, (WORD_BINS,), np.float32),
            "recordings": spaces.Box(0.0, 1.0, (N_RECORDINGS * WORD_BINS,), np.float32),
        }
        if self.hears:
            leaves["acoustic"] = spaces.Box(-BIG, BIG, (len(FEATURE_NAMES),), np.float32)
        leaves["action_mask"] = spaces.Box(0.0, 1.0, (N_CATALOGUE,), np.float32)
        self.observation_space = spaces.Dict(leaves)

    def features(self, obs: dict, info: dict) -> dict[str, np.ndarray]:
        text = obs["text"]
        side = (info["item_id"], info["step_index"])
        out = {
            "words": self.kept(("words", *side), lambda: prompt_words(text)),
            # the listing order is drawn per episode: kept per recordings as listed
            "recordings": self.kept(("recordings", CUE_ID.sub("", text)), lambda: recording_words(text)),
        }
        if self.hears:
            wave = obs["audio"][: int(obs["audio_length"][0])]
            out["acoustic"] = self.kept(("acoustic", *side), lambda: prosodic_features(wave))
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out
