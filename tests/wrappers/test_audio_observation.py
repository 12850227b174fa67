"""The generic audio observation: clip placement, cutting, fill, fresh buffers, clear errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.wrappers.audio import AudioObservation
from hear_gym.wrappers.stack import wrap_env


class _Counter(gym.Env):
    """One Discrete key counting steps; the clip below reads it to say something different each step."""

    observation_space = spaces.Dict({"count": spaces.Discrete(10)})
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return {"count": 0}, {}

    def step(self, action):
        self.count += 1
        return {"count": self.count}, 0.0, self.count >= 3, False, {}


def _clip(env):
    count = env.unwrapped.count
    if count == 1:
        return None, {"heard": "nothing"}
    length = MAX_AUDIO_SAMPLES + 5 if count == 2 else 100
    return np.full(length, 0.5, dtype=np.float32), {"heard": count}


def _fill(env):
    return np.full(MAX_AUDIO_SAMPLES, 0.01, dtype=np.float32)


def test_clip_then_fill_and_cut_at_the_buffer_length():
    env = AudioObservation(_Counter(), _clip, _fill)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["audio_length"][0] == 100 and info == {"heard": 0}
    assert np.all(obs["audio"][:100] == 0.5) and np.all(obs["audio"][100:] == np.float32(0.01))

    obs, _, _, _, info = env.step(0)  # nothing to hear: all zeros, no fill
    assert obs["audio_length"][0] == 0 and not obs["audio"].any() and info == {"heard": "nothing"}

    obs, *_ = env.step(0)  # longer than the buffer: cut
    assert obs["audio_length"][0] == MAX_AUDIO_SAMPLES and np.all(obs["audio"] == 0.5)


def test_without_fill_the_rest_is_silence_and_buffers_are_never_shared():
    env = AudioObservation(_Counter(), _clip)
    first, _ = env.reset(seed=0)
    assert not first["audio"][100:].any()
    env.reset(seed=0)
    second, _ = env.reset(seed=0)
    second["audio"][:] = 1.0  # the silence after a clip is the caller's own too
    assert np.all(first["audio"][:100] == 0.5) and not first["audio"][100:].any()
    third, _ = env.reset(seed=0)
    assert third["audio"].dtype == np.float32 and not third["audio"][100:].any()


class _SeenAudio(gym.ObservationWrapper):
    """A feature observation that keeps the dict observation it was handed."""

    def observation(self, observation):
        self.seen = observation
        return observation


def _stack(observation):
    return wrap_env(
        _Counter(),
        actions="discrete",
        parse_reply=None,
        access=lambda env: AudioObservation(env, _clip, _fill),
        observation=observation,
        features=_SeenAudio,
    )


def test_under_features_the_clip_is_not_padded_and_under_dict_it_is():
    features = _stack("features")
    features.reset(seed=0)
    seen = features.seen
    assert len(seen["audio"]) == seen["audio_length"][0] == 100 and np.all(seen["audio"] == 0.5)
    features.step(0)  # nothing to hear
    assert len(features.seen["audio"]) == features.seen["audio_length"][0] == 0

    padded, _ = _stack("dict").reset(seed=0)
    assert len(padded["audio"]) == MAX_AUDIO_SAMPLES and padded["audio_length"][0] == 100


def test_needs_a_dict_observation():
    with pytest.raises(TypeError, match="Dict observation"):
        AudioObservation(gym.make("CartPole-v1"), _clip)
