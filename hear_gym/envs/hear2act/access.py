"""Access conditions (paper section 4.2) as composable Gymnasium wrappers.

An access condition decides what evidence about the user's turn the assistant observes. The
base env is transcript only (T). ``ACCESS_CONDITIONS`` maps the paper's condition names to
wrapper stacks, so ``gym.make("hear_gym/Hear2Act-v0", access="T+S")`` and
``apply_access(env, "T+S")`` agree:

=======  ==============================================================================
T        transcript only (the base env)
A        audio of the current user turn; the user's words are hidden
A+T      audio of the current user turn and the transcript
T+S      transcript + ground-truth concern-state tag (diagnostic reference)
T+S^     transcript + the text a ``StateInferrer`` writes from the turn's audio
T+SER    transcript + a generic 4-class affect label from an ``AffectClassifier``
=======  ==============================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
from gymnasium import spaces

from hear_gym.core.text import text_space
from hear_gym.envs.hear2act.audio import (
    AffectClassifier,
    AffectLabel,
    InferredState,
    StateInferrer,
    TurnAudio,
    user_audio,
)
from hear_gym.speech.cache import shared_render_cache
from hear_gym.speech.plans import DEFAULT_PROSODY, check_prosody
from hear_gym.speech.renderers import RENDERERS
from hear_gym.wrappers.access import HiddenWords, apply_access_table


class ConcernStateTag(gym.Wrapper):
    """T+S: adds ``concern_state``, the graded delivery label of the user's latest turn
    (e.g. ``"lukewarm"``), as in the paper's P6b channel. Ground truth, a diagnostic reference."""

    KEY = "concern_state"

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError("ConcernStateTag needs a Dict observation space")
        self.observation_space = spaces.Dict({**env.observation_space.spaces, self.KEY: text_space(32)})

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._tag(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._tag(obs, info), reward, terminated, truncated, info

    def _tag(self, obs: dict, info: dict) -> dict:
        return {**obs, self.KEY: info["delivery_label"]}


def hide_user_words(env: gym.Env) -> gym.Env:
    """The user's words become ``[speech]`` (transcript lines and the last utterance); the
    assistant's own lines stay. Over ``user_audio`` it makes the audio-only condition A."""
    return HiddenWords(env, keys=("last_user_utterance",), transcript_key="transcript", user_prefix="User: ")


@dataclass
class AccessContext:
    """What the audio-based conditions need; one shared ``TurnAudio`` per env stack."""

    renderer: str = "espeak"
    prosody: str = DEFAULT_PROSODY  # the delivery plan table (hear_gym.speech.plans)
    audio_cache_dir: Path | None = None
    state_inferrer: StateInferrer | None = None
    affect_classifier: AffectClassifier | None = None
    # True under the feature observation, which measures the turn's audio itself (by its render
    # request, with no audio read when the features are stored): A and A+T then add no audio
    # leaves to a dict observation nobody reads, and render nothing for it
    measured_by_features: bool = False
    _audio: TurnAudio | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # Checked even where nothing is rendered (T), so a typo never waits for an audio condition.
        if self.renderer not in RENDERERS:
            raise ValueError(f"unknown renderer {self.renderer!r}; renderers: {sorted(RENDERERS)}")
        check_prosody(self.prosody)

    def audio(self) -> TurnAudio:
        if self._audio is None:
            self._audio = TurnAudio(shared_render_cache(self.renderer, self.audio_cache_dir), self.prosody)
        return self._audio

    def require(self, name: str):
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"this access condition needs {name}=... (see hear_gym.envs.hear2act.audio)")
        return value


def heard(env: gym.Env, context: AccessContext) -> gym.Env:
    """``env`` with the current turn's audio in its observation (``user_audio``), unless the
    feature observation measures it (``AccessContext.measured_by_features``)."""
    return env if context.measured_by_features else user_audio(env, context.audio())


ACCESS_CONDITIONS: dict[str, Callable[[gym.Env, AccessContext], gym.Env]] = {
    "T": lambda env, ctx: env,
    "A": lambda env, ctx: hide_user_words(heard(env, ctx)),
    "A+T": heard,
    "T+S": lambda env, ctx: ConcernStateTag(env),
    "T+S^": lambda env, ctx: InferredState(env, ctx.audio(), ctx.require("state_inferrer")),
    "T+SER": lambda env, ctx: AffectLabel(env, ctx.audio(), ctx.require("affect_classifier")),
}


def apply_access(env: gym.Env, access: str, context: AccessContext | None = None) -> gym.Env:
    return apply_access_table(env, access, ACCESS_CONDITIONS, "Hear2Act", context or AccessContext())
