"""DeliveryPlan as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are
summarized."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.envs.deliveryplan import report
from hear_gym.envs.deliveryplan.access import ACCESS_CONDITIONS, apply_access
from hear_gym.envs.deliveryplan.actions import parse_reply, replay_replies
from hear_gym.envs.deliveryplan.cases import GENERATOR_VERSION
from hear_gym.envs.deliveryplan.catalogue_actions import CatalogueActions
from hear_gym.envs.deliveryplan.env import DeliveryPlanEnv
from hear_gym.envs.deliveryplan.features import FeatureObservation
from hear_gym.envs.deliveryplan.splits import QUALIFIED_SPLITS, SPLITS
from hear_gym.envs.deliveryplan.splits import item_ids as split_item_ids
from hear_gym.speech.renderers import RENDERERS
from hear_gym.wrappers.access import check_access
from hear_gym.wrappers.stack import check_formats, wrap_env

ENV_ID = "hear_gym/DeliveryPlan-v0"
# "typed" (the base env's Dict space) is built by ``make`` and tested in the family's own tests;
# the family declares the two formats the shared contract tests play (an int from the action mask,
# or a reply)
ACTION_FORMATS = ("discrete", "typed", "text")
DECLARED_FORMATS = ("discrete", "text")


def make(
    access: str = "T",
    actions: str = "discrete",
    observation: str = "dict",
    renderer: str = "espeak",
    **env_kwargs,
) -> gym.Env:
    """Build DeliveryPlan: base env (``env_kwargs`` go to ``DeliveryPlanEnv``: split, partition,
    item_ids, reward, render_mode), the action format (``"discrete"``: the 30-entry catalogue;
    ``"typed"``: the Dict of citations and plan fields; ``"text"``: a strict JSON reply), the
    access condition (``"T"``, ``"A+T"``, ``"A"``; the source clip spoken by ``renderer``,
    ``RENDERERS``) and the observation format (``"dict"`` or SB3-ready ``"features"``)."""
    if renderer not in RENDERERS:
        raise ValueError(f"unknown renderer {renderer!r}; renderers: {sorted(RENDERERS)}")
    if actions not in ACTION_FORMATS:
        raise ValueError(f"actions must be one of {ACTION_FORMATS}, got {actions!r}")
    check_formats("text" if actions == "text" else "discrete", observation)
    check_access(access, ACCESS_CONDITIONS, "DeliveryPlan")
    env = DeliveryPlanEnv(**env_kwargs)
    if actions == "discrete":
        env = CatalogueActions(env)
    return wrap_env(
        env,
        actions="text" if actions == "text" else "discrete",
        parse_reply=lambda base, reply: parse_reply(reply, len(base.case.words)),
        access=lambda inner: apply_access(inner, access, renderer),
        observation=observation,
        features=FeatureObservation,
    )


def item_ids(split: str) -> tuple[str, ...]:
    """Case ids of a public split, or of a shortcut split named with its partition
    (``"source_key_disjoint/test"``); a ``train`` split plays its training pairs only."""
    return split_item_ids(split, "public")


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="deliveryplan",
    access_conditions=tuple(ACCESS_CONDITIONS),
    generator_version=GENERATOR_VERSION,
    make=make,
    item_ids=item_ids,
    summarize=report.summarize,
    tables=report.tables,
    splits=(*SPLITS, *QUALIFIED_SPLITS),
    action_formats=DECLARED_FORMATS,
    episode_scalars=report.episode_scalars,
    replay_replies=replay_replies,
    cli="hear_gym.envs.deliveryplan.cli",
    tools="hear_gym.envs.deliveryplan.tools:TOOLS",
)
