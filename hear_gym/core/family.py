"""The environment-family contract: what the one runner, the CLI and the tests need to know.

A family (Hear2Act, VoiceGate, ...) is one package under ``hear_gym/envs/<name>/`` that exposes a
``FAMILY`` object of this type; ``hear_gym/envs/registration.py`` names it by import string. The
shared layers work with any family through this object alone:

* ``make(**kwargs)`` builds the env (what ``gym.make(env_id, ...)`` calls), with ``access`` and
  ``actions`` among the kwargs;
* ``item_ids(split)`` lists the items an evaluation plays (an item is the unit an episode is
  drawn from: a Hear2Act scenario, a VoiceGate input, an Onset trajectory under one rendering, a
  DeliveryPlan case, one reading of an Ambiguity pair; ``"all"`` for all),
  ``episode_kwargs(item_ids)`` the ``make`` kwargs of an env that can play exactly those, and
  ``reset_options(item_id)`` the ``reset(options=...)`` that plays one of them (by default
  ``item_ids=[...]`` and ``{"item_id": id}``);
* every env writes its finished episode record to ``info["episode"]`` on the last step, so the
  runner never reads ``env.unwrapped``;
* ``summarize(records, config)`` aggregates a run's records into metrics with CIs (it goes into
  ``metadata.json``), and ``tables(metadata)`` lays them out as tables, one source for the
  console, Markdown and W&B;
* ``cell_options`` names the env kwargs that vary between cells of one run (Hear2Act's
  ``feedback``), written into a cell's name after a slash;
* ``figures(metadata, folder)`` (optional) writes a run's figures; ``compare_figure(summaries,
  path)`` (optional) one figure across several runs (Hear2Act: the label-fidelity ladder);
* ``episode_scalars(record)`` (optional) turns one finished episode record into the numbers a
  trainer logs while it trains (return, success, invalid or mute rates, ...);
* ``replay_replies(record)`` (optional) gives a finished episode's replies as text actions (None
  when the record cannot say them), so ``hear-gym view`` replays the episode and shows every turn
  as the agent met it (``hear_gym.eval.episode_replay``);
* ``agent_group`` and ``training_group`` (derived from ``name``) are the entry-point groups of
  the family's agents and of its training material (chat agent, SFT demonstrations, GRPO and
  dialogue tasks, PPO policies, tokenizer corpus), so evaluation and the trainers find both
  without naming the family;
* ``tools`` (optional) names the family's ``hear_gym.core.tools.ToolSet`` ("module:ATTR"): its
  actions as named tools, for agents that call functions (``hear_gym.integrations.trl``); a
  family without one gets the generic ``act(reply)`` tool;
* ``renamed_record_fields`` lists record fields the previous release wrote under another name
  (``(old, new)``), so results readers (``hear_gym.eval.results.read_results``) take older run
  folders in today's form;
* ``cli`` (optional) names the module with the family's commands: ``plan_eval(request)`` turns a
  ``hear-gym eval`` request into a run, ``listen(request)`` and ``render(request)`` serve
  ``hear-gym listen`` and ``hear-gym render``, ``register(app)`` adds the family's own commands.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
from rich.table import Table


def _item_kwargs(ids: Sequence[str]) -> dict[str, Any]:
    return {"item_ids": list(ids)}


def _item_reset(item_id: str) -> dict[str, Any]:
    return {"item_id": item_id}


@dataclass(frozen=True)
class EnvFamily:
    env_id: str
    name: str
    access_conditions: tuple[str, ...]
    generator_version: str
    make: Callable[..., gym.Env]
    item_ids: Callable[[str], tuple[str, ...]]
    summarize: Callable[[Sequence[dict[str, Any]], Any], dict[str, Any]]
    tables: Callable[[dict[str, Any]], list[Table]]
    splits: tuple[str, ...] = ("train", "test")
    action_formats: tuple[str, ...] = ("discrete", "text")
    # by default ``make(item_ids=[...])`` and ``reset(options={"item_id": id})``
    episode_kwargs: Callable[[Sequence[str]], dict[str, Any]] = _item_kwargs
    reset_options: Callable[[str], dict[str, Any]] = _item_reset
    cell_options: tuple[str, ...] = ()
    figures: Callable[[dict[str, Any], Path], list[Path]] | None = None
    compare_figure: Callable[[list[dict[str, Any]], Path], Path] | None = None
    episode_scalars: Callable[[dict[str, Any]], dict[str, float]] | None = None
    replay_replies: Callable[[dict[str, Any]], list[str] | None] | None = None
    cli: str | None = None
    tools: str | None = None  # "module:ATTR" of the family's ToolSet
    # entry-point groups this family's agents were registered under before ``agent_group``; still
    # read, with a DeprecationWarning, for one release
    legacy_agent_groups: tuple[str, ...] = ()
    # (old, new) names of record fields the previous release wrote; results readers rename them,
    # so older run folders still summarize and resume, for one release
    renamed_record_fields: tuple[tuple[str, str], ...] = ()

    @property
    def episode_ids(self) -> Callable[[str], tuple[str, ...]]:
        """Deprecated name of ``item_ids``, read for one release."""
        warnings.warn(
            "EnvFamily.episode_ids is deprecated; use EnvFamily.item_ids", DeprecationWarning, stacklevel=2
        )
        return self.item_ids

    @property
    def agent_group(self) -> str:
        """The entry-point group of the family's agents: ``hear_gym.agents.<name>``."""
        return f"hear_gym.agents.{self.name}"

    @property
    def training_group(self) -> str:
        """The entry-point group of the family's training material (its entry ``material``, read
        by ``agents.training_material``): ``hear_gym.training.<name>``."""
        return f"hear_gym.training.{self.name}"

    def check_access(self, access: str) -> str:
        if access not in self.access_conditions:
            raise ValueError(
                f"{self.env_id}: access must be one of {list(self.access_conditions)}, got {access!r}"
            )
        return access
