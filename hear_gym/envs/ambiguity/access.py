"""Ambiguity access conditions as wrappers.

The base env is ``T``: the transcript as a careful transcriber writes it, punctuation and spelling
included. Punctuation can decide a pause or intonation pair (``Let's eat, Grandma.``), so the
other conditions drop it:

* ``T-nopunct``: the user's words without punctuation (``items.model.bare_words``); a pair's two
  readings then show the same words, and the words alone cannot decide it;
* ``A+T``: the current turn's audio (``AudioObservation``: ``audio``, float32 16 kHz, and
  ``audio_length``) with the unpunctuated words, as a speech recognizer would give them;
* ``A``: the audio, with every user line of the transcript replaced by ``[speech]`` (the agent's
  own earlier answers stay).

The question and its options are text under every condition (the paper's prompt).
"""

from __future__ import annotations

from functools import lru_cache

import gymnasium as gym
import numpy as np

from hear_gym.envs.ambiguity.env import USER, VIEWS_KEPT
from hear_gym.envs.ambiguity.items.model import bare_words
from hear_gym.wrappers.access import HiddenWords, apply_access_table
from hear_gym.wrappers.audio import AudioObservation


def _turn_clip(env: gym.Env) -> tuple[np.ndarray, dict]:
    return env.unwrapped.turn_audio()


def turn_audio(env: gym.Env) -> gym.Env:
    return AudioObservation(env, _turn_clip)


@lru_cache(maxsize=VIEWS_KEPT)
def bare_transcript(transcript: str) -> str:
    """``transcript`` with its user lines' punctuation dropped (the agent's own lines stay); kept,
    as an env shows the same transcripts again."""
    lines = transcript.split("\n")
    return "\n".join(
        USER + bare_words(line[len(USER) :]) if line.startswith(USER) else line for line in lines
    )


class BareWords(gym.ObservationWrapper):
    """User lines of the transcript without punctuation (the agent's own lines stay as they were)."""

    def observation(self, observation: dict) -> dict:
        return {**observation, "transcript": bare_transcript(observation["transcript"])}


def hide_user_words(env: gym.Env) -> gym.Env:
    return HiddenWords(env, transcript_key="transcript", user_prefix=USER)


ACCESS_CONDITIONS = {
    "T": lambda env: env,
    "T-nopunct": BareWords,
    "A+T": lambda env: BareWords(turn_audio(env)),
    "A": lambda env: hide_user_words(turn_audio(env)),
}


def apply_access(env: gym.Env, access: str) -> gym.Env:
    return apply_access_table(env, access, ACCESS_CONDITIONS, "Ambiguity")
