"""A numeric observation for Stable-Baselines3: a Dict of Box leaves (``MultiInputPolicy``).

Everything is computed from what the agent may perceive: the user's audio (through prosodic
features, never the delivery label) and the public side of the dialogue (its own actions, the
candidate list, the turn counter).

* ``prosody``: ``FEATURE_NAMES`` of the current user turn.
* ``prosody_vs_request``: the same minus the features of the user's opening request, i.e.
  relative to this speaker's neutral voice (the dialogue context a listener also has).
* ``dialogue``: turn / max_turns; current option one-hot (11); options recommended so far (11);
  share of turns spent on ask / clarify / recommend / confirm / invalid (5); last action kind
  one-hot (5).
* ``options``: per option, price / stated budget and rating / 5 (11 x 2).
* ``action_mask``: 1.0 for valid actions.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.envs.hear2act_actions import N_ACTIONS
from hear_gym.scenarios.model import N_CANDIDATES
from hear_gym.speech.features import N_FEATURES, prosodic_features
from hear_gym.speech.renderers import SAMPLE_RATE
from hear_gym.wrappers.audio import TurnAudio

ACTION_KINDS = ("ask", "clarify", "recommend", "confirm", "invalid")
DIALOGUE_SIZE = 1 + 2 * N_CANDIDATES + 2 * len(ACTION_KINDS)


class FeatureObservation(gym.ObservationWrapper):
    def __init__(self, env: gym.Env, audio: TurnAudio) -> None:
        super().__init__(env)
        self.audio = audio
        big = np.float32(1e4)
        self.observation_space = spaces.Dict({
            "prosody": spaces.Box(-big, big, (N_FEATURES,), np.float32),
            "prosody_vs_request": spaces.Box(-big, big, (N_FEATURES,), np.float32),
            "dialogue": spaces.Box(0.0, 1.0, (DIALOGUE_SIZE,), np.float32),
            "options": spaces.Box(0.0, big, (N_CANDIDATES, 2), np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32),
        })

    def observation(self, obs: dict) -> dict:
        base = self.env.unwrapped
        current = prosodic_features(self.audio.waveform(self.env), SAMPLE_RATE)
        request = prosodic_features(self.audio.waveform(self.env, turn=0), SAMPLE_RATE)
        return {
            "prosody": np.clip(current, -1e4, 1e4).astype(np.float32),
            "prosody_vs_request": np.clip(current - request, -1e4, 1e4).astype(np.float32),
            "dialogue": self._dialogue(base, int(obs["current_option"])),
            "options": self._options(base),
            "action_mask": np.asarray(obs["action_mask"], dtype=np.float32),
        }

    @staticmethod
    def _dialogue(base, current_option: int) -> np.ndarray:
        out = np.zeros(DIALOGUE_SIZE, dtype=np.float32)
        out[0] = base.turn_count / base.max_turns
        out[current_option] = 1.0  # options are 1-based, slot 0 is the turn fraction
        kinds = []
        for record in base.turns[1:]:
            action = record["action"]
            kinds.append(action["kind"] if action else "invalid")
            if action and action["kind"] == "recommend":
                out[1 + N_CANDIDATES + action["option"] - 1] = 1.0
        offset = 1 + 2 * N_CANDIDATES
        for i, kind in enumerate(ACTION_KINDS):
            out[offset + i] = kinds.count(kind) / len(kinds)
        out[offset + len(ACTION_KINDS) + ACTION_KINDS.index(kinds[-1])] = 1.0
        return out

    @staticmethod
    def _options(base) -> np.ndarray:
        budget = base.scenario.budget.max_price
        return np.array([[c.price / budget, c.rating / 5.0] for c in base.scenario.candidates],
                        dtype=np.float32)
