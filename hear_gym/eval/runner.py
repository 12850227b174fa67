"""Evaluation runner: agents x access conditions x feedback realizations x scenarios x rollouts.

Every (cell, scenario, rollout) episode uses the same seed in every cell, derived from the run
seed, the scenario id and the rollout index, so conditions are paired down to the user's word
draws. Episodes are appended to ``results.jsonl`` as they finish; running the same command
again on the same folder resumes: finished episodes are skipped, none is duplicated.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from hear_gym.eval.results import CONFIG_FILE, RESULTS_FILE, ResultsWriter, write_json_atomic
from hear_gym.metrics.hear2act import episode_counts
from hear_gym.scenarios.generator import GENERATOR_VERSION
from hear_gym.user.states import Feedback
from hear_gym.wrappers.access import ACCESS_CONDITIONS

ENV_ID = "hear_gym/Hear2Act-v0"


@dataclass(frozen=True)
class Cell:
    """One evaluated condition: an agent under an access condition and a feedback realization."""

    agent: str
    access: str
    feedback: str

    @property
    def name(self) -> str:
        return f"{self.agent}@{self.access}/{self.feedback}"

    @classmethod
    def parse(cls, name: str) -> Cell:
        try:
            agent, rest = name.split("@", 1)
            access, feedback = rest.rsplit("/", 1)
        except ValueError:
            raise ValueError(f"cell {name!r} is not 'agent@ACCESS/feedback'") from None
        return cls(agent, access, feedback)


@dataclass(frozen=True)
class RunConfig:
    cells: tuple[Cell, ...]
    scenario_ids: tuple[str, ...]
    rollouts: int = 1
    seed: int = 0
    assistant: str = "text"
    max_turns: int = 20
    generator_version: str = GENERATOR_VERSION  # a bank change must not resume an old run
    # What the env's plug-ins are (renderer, probe checkpoints...), recorded for provenance and
    # for the resume check; the objects themselves are passed to ``run_evaluation``.
    env_options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.cells:
            raise ValueError("nothing to run: no cells")
        if len(set(self.cells)) != len(self.cells):
            raise ValueError("cells repeat")
        for cell in self.cells:
            if cell.access not in ACCESS_CONDITIONS:
                raise ValueError(f"{cell.name}: access must be one of {sorted(ACCESS_CONDITIONS)}")
            Feedback(cell.feedback)
        if self.rollouts < 1:
            raise ValueError("rollouts must be >= 1")
        if not self.scenario_ids:
            raise ValueError("no scenarios")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cells"] = [c.name for c in self.cells]
        data["scenario_ids"] = list(self.scenario_ids)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunConfig:
        return cls(**{**data, "cells": tuple(Cell.parse(c) for c in data["cells"]),
                      "scenario_ids": tuple(data["scenario_ids"]),
                      "env_options": tuple(tuple(pair) for pair in data.get("env_options", ()))})


def episode_seed(run_seed: int, scenario_id: str, rollout: int) -> int:
    digest = hashlib.blake2b(f"{run_seed}/{scenario_id}/{rollout}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


def episode_key(cell: Cell, scenario_id: str, rollout: int) -> str:
    return f"{cell.name}|{scenario_id}|{rollout}"


AgentFactory = Callable[[], Any]


def run_episode(env: gym.Env, agent, scenario_id: str, seed: int) -> dict[str, Any]:
    """Play one episode; returns the record without run-level fields."""
    observation, info = env.reset(seed=seed, options={"scenario_id": scenario_id})
    agent.reset(seed=seed)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, _reward, terminated, truncated, info = env.step(agent.act(observation))
    base = env.unwrapped
    return {
        "scenario_id": scenario_id,
        "domain": base.scenario.domain,
        "seed": seed,
        "final_option": info["final_option"],
        "gold_option": info["gold_option"],
        "success": info["success"],
        "terminated": terminated,
        "truncated": truncated,
        "hidden_concerns": info["hidden_concerns"],
        "counts": episode_counts(base.turns, info["final_option"], info["gold_option"], terminated),
        "turns": base.turns,
    }


def _pending(config: RunConfig, done: set[str]) -> Iterator[tuple[Cell, str, int]]:
    """Scenario-major: a scenario's episodes in every cell run back to back (and in one worker),
    so its rendered audio and features are reused from memory across conditions."""
    for scenario_id in config.scenario_ids:
        for rollout in range(config.rollouts):
            for cell in config.cells:
                if episode_key(cell, scenario_id, rollout) not in done:
                    yield cell, scenario_id, rollout


def run_evaluation(out_dir: Path, config: RunConfig, agents: Mapping[str, AgentFactory],
                   progress: bool = True, env_kwargs: Mapping[str, Any] | None = None,
                   workers: int = 1) -> Path:
    """Run (or resume) every episode of ``config`` into ``out_dir``; returns the results path.
    ``env_kwargs`` go to every ``gym.make`` (e.g. ``renderer``, ``state_inferrer``). With
    ``workers > 1`` episodes run in a pool of processes (spawned, each with its own envs and
    agents; factories and ``env_kwargs`` must pickle); every episode's seed is fixed by the
    config, so results are the same as with one worker, only written in another order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_config(out_dir, config)
    missing = sorted({c.agent for c in config.cells} - set(agents))
    if missing:
        raise ValueError(f"unknown agents {missing}; available: {sorted(agents)}")
    if workers < 1:
        raise ValueError("workers must be >= 1")
    results = out_dir / RESULTS_FILE
    with ResultsWriter(results) as writer:
        todo = list(_pending(config, writer.keys))
        with _progress(progress) as bar:
            task = bar.add_task("episodes", total=len(todo))
            for record in _play_all(todo, config, agents, dict(env_kwargs or {}), workers):
                writer.write(record)
                bar.advance(task)
    return results


class _Player:
    """Plays episodes of a config, building each cell's env and agent on first use."""

    def __init__(self, config: RunConfig, agents: Mapping[str, AgentFactory], env_kwargs: dict) -> None:
        self.config, self.agents, self.env_kwargs = config, agents, env_kwargs
        self.envs: dict[Cell, gym.Env] = {}
        self.cell_agents: dict[Cell, Any] = {}

    def play(self, item: tuple[Cell, str, int]) -> dict[str, Any]:
        cell, scenario_id, rollout = item
        if cell not in self.envs:
            self.cell_agents[cell] = _make_agent(self.agents[cell.agent], cell)
            self.envs[cell] = gym.make(
                ENV_ID, access=cell.access, feedback=cell.feedback,
                actions=getattr(self.cell_agents[cell], "action_format", "discrete"),
                scenario_ids=list(self.config.scenario_ids), assistant=self.config.assistant,
                max_turns=self.config.max_turns, disable_env_checker=True, **self.env_kwargs)
        record = run_episode(self.envs[cell], self.cell_agents[cell], scenario_id,
                             episode_seed(self.config.seed, scenario_id, rollout))
        return {"key": episode_key(cell, scenario_id, rollout), "cell": cell.name, "agent": cell.agent,
                "access": cell.access, "feedback": cell.feedback, "rollout": rollout, **record}

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


_WORKER_PLAYER: _Player | None = None


def _init_worker(config: RunConfig, agents: Mapping[str, AgentFactory], env_kwargs: dict) -> None:
    global _WORKER_PLAYER
    _WORKER_PLAYER = _Player(config, agents, env_kwargs)


def _play_in_worker(items: list[tuple[Cell, str, int]]) -> list[dict[str, Any]]:
    return [_WORKER_PLAYER.play(item) for item in items]


def _by_scenario(todo: list[tuple[Cell, str, int]]) -> list[list[tuple[Cell, str, int]]]:
    chunks: dict[str, list[tuple[Cell, str, int]]] = {}
    for item in todo:
        chunks.setdefault(item[1], []).append(item)
    return list(chunks.values())


def _play_all(todo, config, agents, env_kwargs, workers) -> Iterator[dict[str, Any]]:
    if workers == 1 or len(todo) < 2:
        player = _Player(config, agents, env_kwargs)
        try:
            yield from map(player.play, todo)
        finally:
            player.close()
        return
    context = multiprocessing.get_context("spawn")  # eSpeak and torch hold process state
    with context.Pool(workers, initializer=_init_worker, initargs=(config, agents, env_kwargs)) as pool:
        for records in pool.imap_unordered(_play_in_worker, _by_scenario(todo)):
            yield from records


def _make_agent(factory: AgentFactory, cell: Cell):
    """An agent reads what its ``required_access`` (one condition or several) provides; any
    condition also carries the transcript, so a transcript-only agent runs everywhere."""
    agent = factory()
    needed = getattr(agent, "required_access", "T")
    accepted = (needed,) if isinstance(needed, str) else tuple(needed)
    if "T" not in accepted and cell.access not in accepted:
        raise ValueError(f"{cell.name}: agent {cell.agent!r} needs access {' or '.join(accepted)}")
    return agent


def _check_config(out_dir: Path, config: RunConfig) -> None:
    path = out_dir / CONFIG_FILE
    if path.exists():
        previous = RunConfig.from_json(json.loads(path.read_text(encoding="utf-8")))
        if previous != config:
            raise ValueError(f"{out_dir} holds a run with a different configuration; "
                             f"use a new folder or the same options to resume")
    else:
        write_json_atomic(path, config.to_json())


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), disable=not enabled, transient=False)


__all__ = ["Cell", "RunConfig", "episode_key", "episode_seed", "run_episode", "run_evaluation"]
