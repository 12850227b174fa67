"""Hear2Act as an ``EnvFamily``: how to build it, what an evaluation plays, how runs are
summarized and laid out."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.envs.hear2act import metrics, plots, report
from hear_gym.envs.hear2act.access import ACCESS_CONDITIONS, AccessContext, apply_access
from hear_gym.envs.hear2act.actions import parse_reply, replay_replies
from hear_gym.envs.hear2act.env import Hear2ActEnv
from hear_gym.envs.hear2act.features import FeatureObservation
from hear_gym.envs.hear2act.interventions import StateIntervention
from hear_gym.envs.hear2act.scenarios.bank import SPLITS, scenarios_for
from hear_gym.envs.hear2act.scenarios.generator import GENERATOR_VERSION
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.wrappers.access import check_access
from hear_gym.wrappers.stack import check_formats, wrap_env

ENV_ID = "hear_gym/Hear2Act-v0"


def make(
    access: str = "T",
    actions: str = "discrete",
    observation: str = "dict",
    state_intervention: str | None = None,
    renderer: str = "espeak",
    prosody: str = DEFAULT_PROSODY,
    audio_cache_dir: str | Path | None = None,
    state_inferrer=None,
    affect_classifier=None,
    **env_kwargs,
) -> gym.Env:
    """Build Hear2Act: base env (``env_kwargs`` go to ``Hear2ActEnv``), then the action format
    (``"discrete"`` or P6a ``"text"``), the access condition (``ACCESS_CONDITIONS``), an optional
    label-fidelity ``state_intervention`` on T+S, and the observation format (``"dict"`` or
    SB3-ready ``"features"``). Audio-based pieces render with ``renderer`` ("espeak" | "praat" |
    "neural")
    and the delivery plan table ``prosody`` ("paper" | "clear"), optionally through an on-disk
    cache."""
    check_formats(actions, observation)
    check_access(access, ACCESS_CONDITIONS, "Hear2Act")
    context = AccessContext(
        renderer=renderer,
        prosody=prosody,
        state_inferrer=state_inferrer,
        affect_classifier=affect_classifier,
        audio_cache_dir=Path(audio_cache_dir) if audio_cache_dir else None,
        measured_by_features=observation == "features",
    )

    def access_wrappers(env: gym.Env) -> gym.Env:
        env = apply_access(env, access, context)
        return StateIntervention(env, state_intervention) if state_intervention is not None else env

    return wrap_env(
        Hear2ActEnv(**env_kwargs),
        actions=actions,
        parse_reply=parse_reply,
        access=access_wrappers,
        observation=observation,
        features=lambda env: FeatureObservation(env, access, context.audio),
    )


FAMILY = EnvFamily(
    env_id=ENV_ID,
    name="hear2act",
    access_conditions=tuple(ACCESS_CONDITIONS),
    generator_version=GENERATOR_VERSION,
    legacy_agent_groups=("hear_gym.agents",),
    make=make,
    item_ids=lambda split: tuple(s.scenario_id for s in scenarios_for(split)),
    summarize=report.summarize,
    tables=report.tables,
    splits=SPLITS,
    cell_options=("feedback",),
    figures=lambda metadata, folder: plots.write_plots(metadata, folder),
    compare_figure=lambda summaries, path: plots.ladder_plot({"": plots.ladder_rungs(summaries)}, path),
    episode_scalars=metrics.episode_scalars,
    replay_replies=replay_replies,
    cli="hear_gym.envs.hear2act.cli",
    tools="hear_gym.envs.hear2act.tools:TOOLS",
)


def cell(agent: str, access: str, feedback: str) -> Cell:
    """A Hear2Act cell: an agent under an access condition and a feedback realization."""
    return Cell(agent, access, (("feedback", feedback),))


def run_config(
    cells,
    item_ids,
    rollouts: int = 1,
    seed: int = 0,
    assistant: str = "text",
    max_turns: int = 20,
    plugins=(),
    **env_kwargs,
) -> RunConfig:
    """A Hear2Act ``RunConfig``; ``env_kwargs`` (JSON values, e.g. ``renderer``, ``prosody``,
    ``state_intervention``) go to every ``gym.make`` and into the run's record."""
    kwargs = {"assistant": assistant, "max_turns": max_turns, **env_kwargs}
    return RunConfig(
        ENV_ID,
        tuple(cells),
        tuple(item_ids),
        rollouts,
        seed,
        tuple(sorted(kwargs.items())),
        tuple(plugins),
    )
