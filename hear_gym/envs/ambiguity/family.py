"""Ambiguity as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are summarized."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.envs.ambiguity import report
from hear_gym.envs.ambiguity.access import ACCESS_CONDITIONS, apply_access
from hear_gym.envs.ambiguity.actions import replay_replies
from hear_gym.envs.ambiguity.env import AmbiguityEnv
from hear_gym.envs.ambiguity.features import FeatureObservation
from hear_gym.envs.ambiguity.items.generator import GENERATOR_VERSION, item_ids
from hear_gym.envs.ambiguity.items.model import SPLITS
from hear_gym.envs.ambiguity.metrics import episode_scalars
from hear_gym.wrappers.access import check_access
from hear_gym.wrappers.stack import check_formats, wrap_env

ENV_ID = "hear_gym/Ambiguity-v0"


def make(access: str = "A+T", actions: str = "discrete", observation: str = "dict", **env_kwargs) -> gym.Env:
    """Build Ambiguity: base env (``env_kwargs`` go to ``AmbiguityEnv``: split, item_ids,
    phenomena, languages, voice, renderer, render_mode), the action format (``"discrete"`` or
    ``"text"``: a reply naming one option), the access condition (``"T"``, ``"T-nopunct"``,
    ``"A+T"``, ``"A"``) and the observation format (``"dict"`` or SB3-ready ``"features"``)."""
    check_formats(actions, observation)
    check_access(access, ACCESS_CONDITIONS, "Ambiguity")
    return wrap_env(
        AmbiguityEnv(**env_kwargs),
        actions=actions,
        parse_reply=lambda base, reply: base.parse(reply),
        access=lambda env: apply_access(env, access),
        observation=observation,
        features=FeatureObservation,
    )


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="ambiguity",
    access_conditions=tuple(ACCESS_CONDITIONS),
    generator_version=GENERATOR_VERSION,
    make=make,
    item_ids=item_ids,
    summarize=report.summarize,
    tables=report.tables,
    splits=SPLITS,
    episode_scalars=episode_scalars,
    replay_replies=replay_replies,
    cli="hear_gym.envs.ambiguity.cli",
    tools="hear_gym.envs.ambiguity.tools:TOOLS",
)
