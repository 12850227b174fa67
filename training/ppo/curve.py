"""What both PPO backends write while they train: ``TrainingCurve`` (``curve.jsonl`` and its W&B
twin: a ``train`` row per rollout, an ``eval`` row per checkpoint played on held-out episodes
through the project's runner) and the ``policy.json`` fields of a checkpoint
(``checkpoint_meta``). ``training.ppo.train`` reads top to bottom around it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.ppo import PPOAgent
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.run_folder import open_append, strict_json
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.provenance import provenance
from hear_gym.stats.bootstrap import flat_estimates
from training.curve_rows import finite, read_rows

if TYPE_CHECKING:
    from training.ppo.settings import PPOSettings

CURVE_FILE = "curve.jsonl"
AGENT_NAME = "ppo"
BEST_METRIC = "return"


def evaluation_config(settings: PPOSettings) -> RunConfig:
    env_family = family(settings.env_id)
    cell_options = tuple((k, str(settings.env_options[k])) for k in env_family.cell_options)
    env_kwargs = tuple(sorted((k, v) for k, v in settings.env_options.items() if k not in dict(cell_options)))
    episodes = env_family.item_ids(settings.eval_split)[: settings.eval_limit]
    return RunConfig(
        settings.env_id,
        (Cell(AGENT_NAME, settings.access, cell_options),),
        tuple(episodes),
        seed=settings.seed,
        env_kwargs=env_kwargs,
    )


def evaluate_checkpoint(checkpoint: Path, settings: PPOSettings, out_dir: Path) -> dict[str, Any]:
    """Play a checkpoint on the held-out episodes through the runner; the cell's metrics
    (``{metric: {"point", "low", "high", ...}}``, grouped names joined with "/")."""
    config = evaluation_config(settings)
    agents = {AGENT_NAME: functools.partial(PPOAgent.from_checkpoint, checkpoint)}
    metadata = evaluate(out_dir, config, agents, progress=False)
    return flat_estimates(metadata["cells"][config.cells[0].name]["metrics"])


def episode_scalars(env_id: str) -> Callable[[Mapping], dict[str, float]]:
    """What the curve averages per finished training episode (the family's ``episode_scalars``)."""
    return family(env_id).episode_scalars or (lambda record: {})


class TrainingCurve:
    """``curve.jsonl`` and its W&B twin: a ``train`` row per rollout (the mean of each episode
    scalar over the training episodes that finished in it) and an ``eval`` row per checkpoint.
    ``save(folder, step)`` writes the backend's current policy as a checkpoint folder."""

    def __init__(self, settings: PPOSettings, save: Callable[[Path, int], Path], wandb_run=None) -> None:
        self.settings, self.save, self.wandb_run = settings, save, wandb_run
        self.episodes: list[dict[str, float]] = []
        self.next_eval = settings.eval_every or None
        self.curve_path = settings.out / CURVE_FILE

    def add_episode(self, scalars: dict[str, float]) -> None:
        self.episodes.append(scalars)

    def end_rollout(self, step: int) -> None:
        if not self.episodes:
            return
        keys = sorted({k for e in self.episodes for k in e})
        means = {k: float(np.mean([e[k] for e in self.episodes if k in e])) for k in keys}
        self.write({"kind": "train", "episodes": len(self.episodes), **means}, step)
        self.episodes = []

    def evaluate_if_due(self, step: int) -> None:
        due = self.next_eval is not None and step >= self.next_eval
        if due and step < self.settings.total_steps:  # the last one is "final"
            self.evaluate(f"step_{step}", step)
            # a rollout may pass several eval points (RLlib steps whole batches): evaluate once
            self.next_eval = (step // self.settings.eval_every + 1) * self.settings.eval_every

    def evaluate(self, name: str, step: int) -> dict[str, Any]:
        checkpoint = self.save(self.settings.out / "checkpoints" / name, step)
        metrics = evaluate_checkpoint(checkpoint, self.settings, self.settings.out / "evals" / name)
        relative = checkpoint.relative_to(self.settings.out).as_posix()
        self.write({"kind": "eval", "checkpoint": relative, "metrics": metrics}, step)
        return metrics

    def write(self, row: dict[str, Any], step: int) -> None:
        row = {"step": int(step), **row}
        with open_append(self.curve_path) as f:
            f.write(strict_json(finite(row)) + "\n")
        if self.wandb_run is not None:
            self.wandb_run.log(_wandb_row(row), step=row["step"])


def best_evaluated(out: Path) -> tuple[str, dict[str, Any]]:
    """(checkpoint folder relative to ``out``, its metrics) of the evaluation row of the run's
    curve with the highest mean held-out return; the later checkpoint on a tie. Choose on a split
    the final report does not play (``eval_split="dev"``), as SB3's ``EvalCallback`` keeps its
    best model, so the choice is not fitted to the test episodes."""
    evaluated = [row for row in read_rows(out / CURVE_FILE) if row["kind"] == "eval"]
    if not evaluated:
        raise ValueError(f"{out / CURVE_FILE}: no evaluation rows to choose a best checkpoint from")
    best = max(evaluated, key=lambda row: (row["metrics"][BEST_METRIC]["point"], row["step"]))
    return best["checkpoint"], best["metrics"]


def _wandb_row(row: dict[str, Any]) -> dict[str, float]:
    if row["kind"] != "eval":  # train rows, and imitation rows before PPO
        return {f"{row['kind']}/{k}": v for k, v in row.items() if isinstance(v, float)}
    flat = {}
    for metric, estimate in row["metrics"].items():
        flat[f"eval/{metric}"] = estimate["point"]
        flat[f"eval/{metric} low"], flat[f"eval/{metric} high"] = estimate["low"], estimate["high"]
    return flat


def checkpoint_meta(
    settings: PPOSettings,
    step: int,
    algorithm: str,
    packages: tuple[str, ...],
    normalization: dict[str, Any] | None = None,
) -> dict:
    """The ``policy.json`` fields a trainer adds to the checkpoint (``agents.ppo.save_policy``);
    ``normalization``: ``normalization_stats`` of the training envs."""
    return {
        "algorithm": algorithm,
        "env_id": settings.env_id,
        "access": settings.access,
        "env_options": settings.env_options,
        "train_env_options": settings.train_env_options,
        "policy": settings.policy,
        "net_arch": list(settings.net_arch),
        "observation_normalization": normalization or {},
        "seed": settings.seed,
        "step": int(step),
        "provenance": provenance(settings.env_id),
        "versions": {name: version(name.replace("_", "-")) for name in packages},
    }
