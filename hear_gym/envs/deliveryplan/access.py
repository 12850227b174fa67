"""DeliveryPlan access conditions as wrappers.

The base env is ``T``: the source record's emotion and intensity are written in the prompt, as
the paper gives them. ``A+T`` adds the source record rendered as speech (its statement in its
emotion, intensity and voice, by ``evidence_audio.render_evidence`` with the env's renderer) as
``audio``/``audio_length``.
``A`` is ``A+T`` with the labels taken out of the prompt: the cue id stays (it is what the planner
cites), so the planner must *hear* the emotion and intensity it plans from.
"""

from __future__ import annotations

from functools import lru_cache

import gymnasium as gym
import numpy as np

from hear_gym.wrappers.access import apply_access_table
from hear_gym.wrappers.audio import AudioObservation

# the suite's 143 distinct source records (200 case sides), with room: 15 MB of eSpeak clips, the
# arrays the render cache holds while it holds them
KEPT_SOURCE_CLIPS = 256


@lru_cache(maxsize=KEPT_SOURCE_CLIPS)
def _source_waveform(request: tuple[str, str, str, str], renderer: str) -> np.ndarray:
    """The rendering of a source record, read-only: kept here, so a step that shows it again
    does not build the render request and its cache key anew (the rendering is a function of
    these arguments, ``render_evidence``)."""
    # imported here: rendering speech is only needed (and only loaded) under audio access
    from hear_gym.envs.deliveryplan.evidence_audio import render_evidence

    return render_evidence(*request, renderer=renderer)


def _source_clip(env: gym.Env, renderer: str) -> tuple[np.ndarray, dict]:
    return _source_waveform(env.unwrapped.source_audio_request(), renderer), {}


def source_audio(env: gym.Env, renderer: str = "espeak") -> gym.Env:
    return AudioObservation(env, lambda inner: _source_clip(inner, renderer))


class HiddenLabels(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """The prompt without the source record's emotion and intensity (its cue id stays)."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)

    def observation(self, observation: dict) -> dict:
        return {**observation, "text": self.env.unwrapped.prompt(labels=False)}


def hide_user_words(env: gym.Env) -> gym.Env:
    """What the family contract calls hiding the words the agent must hear instead: here, the
    source record's labels."""
    return HiddenLabels(env)


ACCESS_CONDITIONS = {
    "A": lambda env, renderer: hide_user_words(source_audio(env, renderer)),
    "A+T": source_audio,
    "T": lambda env, renderer: env,
}


def apply_access(env: gym.Env, access: str, renderer: str = "espeak") -> gym.Env:
    return apply_access_table(env, access, ACCESS_CONDITIONS, "DeliveryPlan", renderer)
