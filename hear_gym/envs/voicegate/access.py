"""VoiceGate access conditions as wrappers.

The base env is ``T`` (transcript and tool inventory). ``A+T`` adds the input's audio
(``ItemAudio``: ``audio``, float32 16 kHz padded to ``MAX_AUDIO_SECONDS`` with the
continuation of the input's own room tone, so that no part of the buffer is digital silence,
and ``audio_length``, where the input ends (shape (1,)), 0 for text-only inputs, whose buffer is all zeros;
the synthesis manifest goes to ``info["manifest"]``, ``{}`` for text-only inputs).
``A`` (what the paper's Audio LLMs get) is ``A+T`` with the transcript of an input with audio
replaced by ``[speech]``; text-only inputs keep their words, they have nothing else.
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES, audio_spaces
from hear_gym.core.text import SPEECH_PLACEHOLDER
from hear_gym.envs.voicegate.scenes import room_tone

GATE_ACCESS = ("A+T", "A", "T")


class ItemAudio(gym.Wrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,
                **audio_spaces(),
            }
        )

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._add(obs, info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        obs, info = self._add(obs, info)
        return obs, reward, terminated, truncated, info

    def _add(self, obs: dict, info: dict) -> tuple[dict, dict]:
        base = self.env.unwrapped
        rendered = base.item_audio()
        waveform = np.zeros(MAX_AUDIO_SAMPLES, dtype=np.float32)
        length = 0
        if rendered is not None:
            length = min(len(rendered[0]), MAX_AUDIO_SAMPLES)
            waveform[:length] = rendered[0][:length]
            waveform[length:] = room_tone(base.item, MAX_AUDIO_SAMPLES)[length:]
        manifest = copy.deepcopy(rendered[1]) if rendered is not None else {}  # {}: text-only input
        return (
            {**obs, "audio": waveform, "audio_length": np.array([length], dtype=np.int64)},
            {**info, "manifest": manifest},
        )


class HideTranscript(gym.ObservationWrapper):
    def observation(self, obs: dict) -> dict:
        if obs["audio_length"][0] > 0:
            obs = {**obs, "transcript": SPEECH_PLACEHOLDER}
        return obs


_WRAPPERS = {"A+T": (ItemAudio,), "A": (ItemAudio, HideTranscript), "T": ()}


def apply_gate_access(env: gym.Env, access: str) -> gym.Env:
    if access not in _WRAPPERS:
        raise ValueError(f"VoiceGate access must be one of {GATE_ACCESS}, got {access!r}")
    for wrapper in _WRAPPERS[access]:
        env = wrapper(env)
    return env
