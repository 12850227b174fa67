"""Audio of the current user turn, and the access conditions built on it (paper section 4.2).

``TurnAudio`` renders what the simulated user just said, in the delivery the engine chose, with
the scenario's voice and the chosen prosody plan table (``user_turn_request``: the scenario's
user is the speaker, so each user has their own habitual prosody); it renders lazily (only the
current turn, only when a wrapper asks) and through a ``RenderCache``. The wrappers:

* ``user_audio`` (A+T) is the generic ``hear_gym.wrappers.audio.AudioObservation`` hearing the
  current turn: ``audio`` (float32, 16 kHz, zero-padded to ``MAX_AUDIO_SECONDS``, longer turns
  cut) and ``audio_length`` (valid samples, shape (1,): SB3 takes no 0-d Boxes).
* ``InferredState`` (T+S^) adds ``inferred_state``: the text a pluggable ``StateInferrer`` writes
  after hearing the current turn's audio in its dialogue context (the transcript and the user's
  opening request as reference audio), folded into one line of the observation charset. The inferrer never sees the delivery label or any ground
  truth, and the agent never gets the raw audio.
* ``AffectLabel`` (T+SER) adds ``affect``: a generic 4-class speech-emotion label from a
  pluggable ``AffectClassifier``, passed verbatim (never mapped to concern states).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import text_space, to_charset
from hear_gym.speech.cache import Heard, RenderCache
from hear_gym.speech.espeak import VOICES
from hear_gym.speech.plans import DEFAULT_PROSODY, check_prosody
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest
from hear_gym.wrappers.audio import AudioObservation

AFFECT_LABELS = ("happy", "sad", "angry", "neutral")


def voice_for(scenario_id: str) -> str:
    """Each scenario's user keeps one voice for the whole dialogue."""
    digest = hashlib.blake2b(scenario_id.encode(), digest_size=4).digest()
    return VOICES[int.from_bytes(digest, "little") % len(VOICES)]


def user_turn_request(
    scenario_id: str, text: str, delivery: str, prosody: str = DEFAULT_PROSODY
) -> RenderRequest:
    """How a Hear2Act scenario's user says ``text``: their voice, and they are the speaker."""
    return RenderRequest(text, delivery, voice_for(scenario_id), prosody=prosody, speaker=scenario_id)


class TurnAudio:
    """Renders the base env's latest user turn; shared by the wrappers of one env stack."""

    def __init__(self, cache: RenderCache, prosody: str = DEFAULT_PROSODY) -> None:
        self.cache, self.prosody = cache, check_prosody(prosody)

    def request(self, env: gym.Env, turn: int = -1) -> RenderRequest:
        base = env.unwrapped
        record = base.turns[turn]
        return user_turn_request(
            base.scenario.scenario_id, record["user_text"], record["delivery_label"], self.prosody
        )

    def waveform(self, env: gym.Env, turn: int = -1) -> np.ndarray:
        return self.cache.waveform(self.request(env, turn))

    def heard(self, env: gym.Env, turn: int = -1) -> Heard:
        return self.cache.heard(self.request(env, turn))


class _AddKeys(gym.Wrapper):
    """Base for wrappers that add observation keys computed after reset and after each step."""

    def __init__(self, env: gym.Env, new_spaces: dict[str, spaces.Space]) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError(f"{type(self).__name__} needs a Dict observation space")
        self.observation_space = spaces.Dict({**env.observation_space.spaces, **new_spaces})

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return {**obs, **self.added(obs, info)}, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return {**obs, **self.added(obs, info)}, reward, terminated, truncated, info

    def added(self, obs: dict, info: dict) -> dict[str, Any]:
        raise NotImplementedError


def user_audio(env: gym.Env, audio: TurnAudio) -> gym.Env:
    return AudioObservation(env, lambda inner: (audio.waveform(inner), {}))


class StateInferrer(Protocol):
    """Writes what the user's delivery says about the current recommendation (paper P6c).
    ``reference`` is the same user's opening request, the dialogue's audio context. One that
    also has ``infer_heard(turn, transcript, reference)`` gets ``hear_gym.speech.cache.Heard``
    turns instead: their stored features without reading audio, the waveform if it asks (every
    condition of a grid then shares each turn's features)."""

    def infer(
        self, waveform: np.ndarray, sample_rate: int, transcript: str, reference: np.ndarray
    ) -> str: ...


class AffectClassifier(Protocol):
    """A generic speech-emotion recognizer with the 4-class label space of ``AFFECT_LABELS``.
    One that also has ``classify_heard(turn)`` gets a ``Heard`` turn (as ``StateInferrer``)."""

    def classify(self, waveform: np.ndarray, sample_rate: int) -> str: ...


class InferredState(_AddKeys):
    def __init__(self, env: gym.Env, audio: TurnAudio, inferrer: StateInferrer) -> None:
        super().__init__(env, {"inferred_state": text_space(256)})
        self.audio, self.inferrer = audio, inferrer

    def added(self, obs, info):
        heard = getattr(self.inferrer, "infer_heard", None)
        if callable(heard):
            text = heard(self.audio.heard(self.env), obs["transcript"], self.audio.heard(self.env, turn=0))
        else:
            text = self.inferrer.infer(
                self.audio.waveform(self.env),
                SAMPLE_RATE,
                obs["transcript"],
                self.audio.waveform(self.env, turn=0),
            )
        # A plug-in's text is folded into the observation charset (one line, typographic
        # punctuation to ASCII, the rest such as a lone surrogate dropped) so it fits the space.
        line = to_charset(text).strip()[:256] if isinstance(text, str) else ""
        if not line:
            raise ValueError(f"state inferrer returned {text!r}; it must return a non-empty sentence")
        return {"inferred_state": line}


class AffectLabel(_AddKeys):
    def __init__(self, env: gym.Env, audio: TurnAudio, classifier: AffectClassifier) -> None:
        super().__init__(env, {"affect": text_space(16)})
        self.audio, self.classifier = audio, classifier

    def added(self, obs, info):
        heard = getattr(self.classifier, "classify_heard", None)
        if callable(heard):
            label = heard(self.audio.heard(self.env))
        else:
            label = self.classifier.classify(self.audio.waveform(self.env), SAMPLE_RATE)
        if label not in AFFECT_LABELS:
            raise ValueError(f"affect classifier returned {label!r}, not one of {AFFECT_LABELS}")
        return {"affect": label}
