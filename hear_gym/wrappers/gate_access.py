"""VoiceGate access conditions as observation wrappers.

``A+T`` (the base env): audio and transcript. ``A`` (what the paper's Audio LLMs get): audio
only; the transcript of an item with audio reads ``[speech]`` (text-only items keep their words,
they have nothing else). ``T``: transcript only; the audio is silence of length 0.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from hear_gym.wrappers.audio import SPEECH_PLACEHOLDER

GATE_ACCESS = ("A+T", "A", "T")


class HideTranscript(gym.ObservationWrapper):
    def observation(self, obs: dict) -> dict:
        if int(obs["audio_length"]) > 0:
            obs = {**obs, "transcript": SPEECH_PLACEHOLDER}
        return obs


class DropAudio(gym.ObservationWrapper):
    def observation(self, obs: dict) -> dict:
        return {**obs, "audio": np.zeros_like(obs["audio"]), "audio_length": np.array(0, dtype=np.int64)}


_WRAPPERS = {"A+T": (), "A": (HideTranscript,), "T": (DropAudio,)}


def apply_gate_access(env: gym.Env, access: str) -> gym.Env:
    if access not in _WRAPPERS:
        raise ValueError(f"VoiceGate access must be one of {GATE_ACCESS}, got {access!r}")
    for wrapper in _WRAPPERS[access]:
        env = wrapper(env)
    return env
