"""Onset as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are summarized."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.envs.onset import metrics, report
from hear_gym.envs.onset.access import ONSET_ACCESS, apply_onset_access
from hear_gym.envs.onset.actions import parse_reply
from hear_gym.envs.onset.env import OnsetEnv
from hear_gym.envs.onset.features import OnsetFeatureObservation
from hear_gym.envs.onset.groups.generator import GENERATOR_VERSION, episode_ids
from hear_gym.envs.onset.groups.model import SPLITS
from hear_gym.envs.onset.scenes import SCENE_VERSION
from hear_gym.wrappers.text_actions import TextActions

ENV_ID = "hear_gym/Onset-v0"
ACTION_FORMATS = ("discrete", "text")
OBSERVATION_FORMATS = ("dict", "features")
# the groups and the audio built from them: a run of older audio never resumes
VERSION = f"{GENERATOR_VERSION}+{SCENE_VERSION}"


def make(access: str = "A", actions: str = "discrete", observation: str = "dict", **env_kwargs) -> gym.Env:
    """Build Onset: base env (``env_kwargs`` go to ``OnsetEnv``: split, renderings, item_ids,
    render_mode), the action format (``"discrete"`` or ``"text"``: a reply naming one label), the
    access condition (``"A"``, ``"A+T"``, ``"T"``) and the observation format (``"dict"`` or
    SB3-ready ``"features"``)."""
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    if observation not in OBSERVATION_FORMATS:
        raise ValueError(f"observation must be one of {OBSERVATION_FORMATS}, got {observation!r}")
    if access not in ONSET_ACCESS:
        raise ValueError(f"Onset access must be one of {ONSET_ACCESS}, got {access!r}")
    env: gym.Env = OnsetEnv(**env_kwargs)
    if actions == "text":
        env = TextActions(env, lambda base, reply: parse_reply(reply))
    env = apply_onset_access(env, access)
    if observation == "features":
        env = OnsetFeatureObservation(env)
    return env


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="onset",
    access_conditions=ONSET_ACCESS,
    action_formats=ACTION_FORMATS,
    agent_group="hear_gym.onset_agents",
    generator_version=VERSION,
    make=make,
    episode_ids=episode_ids,
    episode_kwargs=lambda ids: {"item_ids": list(ids)},
    reset_options=lambda item: {"item_id": item},
    summarize=report.summarize,
    tables=report.tables,
    splits=SPLITS,
    episode_scalars=metrics.episode_scalars,
    cli="hear_gym.envs.onset.cli",
)
