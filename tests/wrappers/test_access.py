"""The shared access layer: one condition table per family, one hidden-words wrapper, and every
family built the same way from them (one name per part)."""

from importlib import import_module

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from hear_gym.core.registry import env_ids, family
from hear_gym.core.text import SPEECH_PLACEHOLDER, text_space
from hear_gym.envs.registration import FAMILIES
from hear_gym.wrappers.access import HiddenWords, apply_access_table


class _Dialogue(gym.Env):
    def __init__(self, audio_length: int = 5) -> None:
        self.observation_space = spaces.Dict(
            {
                "transcript": text_space(200),
                "last": text_space(50),
                "audio_length": spaces.Box(0, 100, (1,), np.int64),
            }
        )
        self.action_space = spaces.Discrete(1)
        self.audio_length = audio_length

    def _obs(self):
        return {
            "transcript": "User: I need a cheap one\nAssistant: Try B\nUser: okay, sounds good",
            "last": "okay, sounds good",
            "audio_length": np.array([self.audio_length]),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        return self._obs(), 0.0, False, False, {}


def test_user_lines_and_keys_lose_their_words_and_the_agent_keeps_its_own():
    obs, _ = HiddenWords(_Dialogue(), keys=("last",), transcript_key="transcript").reset(seed=0)
    assert obs["last"] == SPEECH_PLACEHOLDER
    assert obs["transcript"].split("\n") == [
        f"User: {SPEECH_PLACEHOLDER}",
        "Assistant: Try B",
        f"User: {SPEECH_PLACEHOLDER}",
    ]


def test_only_with_audio_keeps_the_words_of_a_turn_without_audio():
    heard, _ = HiddenWords(_Dialogue(5), keys=("transcript",), only_with_audio=True).reset(seed=0)
    silent, _ = HiddenWords(_Dialogue(0), keys=("transcript",), only_with_audio=True).reset(seed=0)
    assert heard["transcript"] == SPEECH_PLACEHOLDER
    assert silent["transcript"].startswith("User: I need a cheap one")


def test_a_key_the_observation_lacks_is_refused_at_construction():
    with pytest.raises(ValueError, match="has no"):
        HiddenWords(_Dialogue(), keys=("words",))


def test_an_unknown_condition_names_the_family_and_its_conditions():
    table = {"T": lambda env: env}
    with pytest.raises(ValueError, match=r"Toy access must be one of \['T'\], got 'X'"):
        apply_access_table(_Dialogue(), "X", table, "Toy")


def _module(env_id: str, part: str):
    package = FAMILIES[env_id].partition(":")[0].rpartition(".")[0]
    return import_module(f"{package}.{part}")


@pytest.mark.parametrize("env_id", env_ids())
def test_every_family_names_its_parts_alike(env_id):
    access, features, actions = (_module(env_id, part) for part in ("access", "features", "actions"))
    assert tuple(access.ACCESS_CONDITIONS) == family(env_id).access_conditions
    assert callable(access.apply_access) and callable(access.hide_user_words)
    assert issubclass(features.FeatureObservation, gym.Wrapper)
    assert callable(actions.parse_reply)
    assert family(env_id).agent_group == f"hear_gym.agents.{family(env_id).name}"
    import_module(f"agents.{family(env_id).name}.baselines")  # the family's rule agents


@pytest.mark.parametrize("env_id", env_ids())
def test_every_family_refuses_an_unknown_condition_the_same_way(env_id):
    with pytest.raises(ValueError, match=r"access must be one of \["):
        gym.make(env_id, access="T+X")
