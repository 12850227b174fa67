"""Onset as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are summarized."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.envs.onset import metrics, report
from hear_gym.envs.onset.access import ACCESS_CONDITIONS, apply_access
from hear_gym.envs.onset.actions import parse_reply, replay_replies
from hear_gym.envs.onset.env import OnsetEnv
from hear_gym.envs.onset.features import FeatureObservation
from hear_gym.envs.onset.groups.generator import GENERATOR_VERSION, item_ids
from hear_gym.envs.onset.groups.model import SPLITS
from hear_gym.envs.onset.scenes import SCENE_VERSION
from hear_gym.wrappers.access import check_access
from hear_gym.wrappers.stack import check_formats, wrap_env

ENV_ID = "hear_gym/Onset-v0"
# the groups and the audio built from them: a run of older audio never resumes
VERSION = f"{GENERATOR_VERSION}+{SCENE_VERSION}"


def make(access: str = "A", actions: str = "discrete", observation: str = "dict", **env_kwargs) -> gym.Env:
    """Build Onset: base env (``env_kwargs`` go to ``OnsetEnv``: split, renderings, item_ids,
    render_mode, renderer, audio_cache_dir), the action format (``"discrete"`` or ``"text"``: a
    reply naming one label), the access condition (``"A"``, ``"A+T"``, ``"T"``) and the
    observation format (``"dict"`` or SB3-ready ``"features"``)."""
    check_formats(actions, observation)
    check_access(access, ACCESS_CONDITIONS, "Onset")
    return wrap_env(
        OnsetEnv(**env_kwargs),
        actions=actions,
        parse_reply=lambda base, reply: parse_reply(reply),
        access=lambda env: apply_access(env, access),
        observation=observation,
        features=FeatureObservation,
    )


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="onset",
    access_conditions=tuple(ACCESS_CONDITIONS),
    generator_version=VERSION,
    legacy_agent_groups=("hear_gym.onset_agents",),
    make=make,
    item_ids=item_ids,
    summarize=report.summarize,
    tables=report.tables,
    splits=SPLITS,
    episode_scalars=metrics.episode_scalars,
    replay_replies=replay_replies,
    cli="hear_gym.envs.onset.cli",
    tools="hear_gym.envs.onset.tools:TOOLS",
    renamed_record_fields=(("family", "domain"),),  # a group's domain was its "family"
)
