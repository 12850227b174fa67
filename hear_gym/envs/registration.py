"""Registered env ids and the factories behind them."""

from __future__ import annotations

import gymnasium as gym

from pathlib import Path

from hear_gym.envs.hear2act.env import Hear2ActEnv
from hear_gym.envs.voicegate.env import VoiceGateEnv
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.envs.hear2act.access import AccessContext, apply_access
from hear_gym.envs.hear2act.features import FeatureObservation
from hear_gym.envs.hear2act.interventions import StateIntervention
from hear_gym.envs.voicegate.access import apply_gate_access
from hear_gym.envs.voicegate.features import GateFeatureObservation
from hear_gym.wrappers.text_actions import TextActions, VoiceGateTextActions

ACTION_FORMATS = ("discrete", "text")
OBSERVATION_FORMATS = ("dict", "features")


def make_hear2act(access: str = "T", actions: str = "discrete", observation: str = "dict",
                  state_intervention: str | None = None, renderer: str = "espeak",
                  prosody: str = DEFAULT_PROSODY, audio_cache_dir: str | Path | None = None,
                  state_inferrer=None, affect_classifier=None, **env_kwargs) -> gym.Env:
    """Build Hear2Act: base env (``env_kwargs`` go to ``Hear2ActEnv``), then the action format
    (``"discrete"`` or P6a ``"text"``), the access condition (``ACCESS_CONDITIONS``), an optional
    label-fidelity ``state_intervention`` on T+S, and the observation format (``"dict"`` or
    SB3-ready ``"features"``). Audio-based pieces render with ``renderer`` ("espeak" | "praat")
    and the delivery plan table ``prosody`` ("paper" | "clear"), optionally through an on-disk
    cache."""
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    if observation not in OBSERVATION_FORMATS:
        raise ValueError(f"observation must be one of {OBSERVATION_FORMATS}, got {observation!r}")
    context = AccessContext(renderer=renderer, prosody=prosody,
                            state_inferrer=state_inferrer, affect_classifier=affect_classifier,
                            audio_cache_dir=Path(audio_cache_dir) if audio_cache_dir else None)
    env: gym.Env = Hear2ActEnv(**env_kwargs)
    if actions == "text":
        env = TextActions(env)
    env = apply_access(env, access, context)
    if state_intervention is not None:
        env = StateIntervention(env, state_intervention)
    if observation == "features":
        env = FeatureObservation(env, access, context.audio)
    return env


def make_voicegate(access: str = "A+T", actions: str = "discrete", observation: str = "dict",
                   **env_kwargs) -> gym.Env:
    """Build VoiceGate: base env (``env_kwargs`` go to ``VoiceGateEnv``: family, split,
    conditions, renderer, audio_cache_dir, reward, judge, side_talk_cue), the action format
    (``"discrete"`` or the canonical ``"text"`` grammar), the access condition (``"A+T"``,
    ``"A"``, ``"T"``) and the observation format (``"dict"`` or SB3-ready ``"features"``)."""
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    if observation not in OBSERVATION_FORMATS:
        raise ValueError(f"observation must be one of {OBSERVATION_FORMATS}, got {observation!r}")
    env: gym.Env = VoiceGateEnv(**env_kwargs)
    if actions == "text":
        env = VoiceGateTextActions(env)
    env = apply_gate_access(env, access)
    if observation == "features":
        env = GateFeatureObservation(env)
    return env


_FACTORIES = {"hear_gym/Hear2Act-v0": "hear_gym.envs.registration:make_hear2act",
              "hear_gym/VoiceGate-v0": "hear_gym.envs.registration:make_voicegate"}
ENV_IDS = tuple(_FACTORIES)


def register_envs() -> None:
    for env_id, entry_point in _FACTORIES.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)
