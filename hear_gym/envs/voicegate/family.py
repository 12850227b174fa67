"""VoiceGate as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are
summarized and laid out."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.envs.voicegate import metrics, report
from hear_gym.envs.voicegate.access import ACCESS_CONDITIONS, apply_access
from hear_gym.envs.voicegate.actions import parse_reply
from hear_gym.envs.voicegate.env import VoiceGateEnv
from hear_gym.envs.voicegate.features import FeatureObservation
from hear_gym.envs.voicegate.items.generator import GENERATOR_VERSION, all_items
from hear_gym.envs.voicegate.items.model import SPLITS
from hear_gym.wrappers.access import check_access
from hear_gym.wrappers.stack import check_formats, wrap_env

ENV_ID = "hear_gym/VoiceGate-v0"
EVAL_FAMILIES = ("speaker_switch", "side_talk", "self_talk")  # cue_validity is a separate study


def make(access: str = "A+T", actions: str = "discrete", observation: str = "dict", **env_kwargs) -> gym.Env:
    """Build VoiceGate: base env (``env_kwargs`` go to ``VoiceGateEnv``: family, split,
    conditions, item_ids, renderer, audio_cache_dir, reward, judge, side_talk_cue), the action
    format (``"discrete"`` or the canonical ``"text"`` grammar), the access condition (``"A+T"``,
    ``"A"``, ``"T"``) and the observation format (``"dict"`` or SB3-ready ``"features"``)."""
    check_formats(actions, observation)
    check_access(access, ACCESS_CONDITIONS, "VoiceGate")
    return wrap_env(
        VoiceGateEnv(**env_kwargs),
        actions=actions,
        parse_reply=lambda base, reply: parse_reply(reply),
        access=lambda env: apply_access(env, access),
        observation=observation,
        features=FeatureObservation,
    )


def item_ids(
    split: str, families: Sequence[str] = EVAL_FAMILIES, side_talk_cue: str = "none"
) -> tuple[str, ...]:
    """The items of ``families`` in ``split`` ("train", "test" or "all"), in generation order."""
    return tuple(
        i.item_id
        for i in all_items(side_talk_cue)
        if i.family.value in families and split in ("all", i.split)
    )


def run_config(
    agent: str, access: str, item_ids: Sequence[str], seed: int = 0, plugins=(), **env_kwargs
) -> RunConfig:
    """A VoiceGate ``RunConfig`` for one agent under one access condition."""
    return RunConfig(
        ENV_ID,
        (Cell(agent, access),),
        tuple(item_ids),
        1,
        seed,
        tuple(sorted(env_kwargs.items())),
        tuple(plugins),
    )


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="voicegate",
    access_conditions=tuple(ACCESS_CONDITIONS),
    generator_version=GENERATOR_VERSION,
    legacy_agent_groups=("hear_gym.gate_agents",),
    make=make,
    item_ids=item_ids,
    summarize=report.summarize,
    tables=report.tables,
    splits=SPLITS,
    episode_scalars=metrics.episode_scalars,
    cli="hear_gym.envs.voicegate.cli",
    tools="hear_gym.envs.voicegate.tools:TOOLS",
)
