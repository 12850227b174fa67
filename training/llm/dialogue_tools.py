"""Dialogue GRPO through TRL's ``environment_factory`` (``interface="tools"``, the default of
``training.llm.dialogue_grpo``): the model plays the task's env through its family's named tools
(``hear_gym.integrations.trl``; Hear2Act: ``ask``, ``ask_about``, ``clarify``, ``recommend``,
``confirm``), TRL runs the tool loop, and the reward is the env return (``get_reward``).

* The dataset: one row per train item (``episode_rows``: the tool set's instruction, the
  item id and the run's seed), so every dialogue of a group starts from the same state.
* ``EpisodeHistory``: each scored rollout's return, success, calls, invalid calls and whether it
  was played out (left unfinished by the model or cut by a cap), for the curve.
* ``ToolsCurveLog``: one ``curve.jsonl`` row per optimizer step with those statistics and TRL's
  loss and tool-call frequency.
* ``evaluate_tools``: the held-out evaluation plays ``limit`` test items through the same
  factory with TRL's own generation (``trainer.evaluate``; each item ``num_generations``
  times, sampled at the training temperature: the policy GRPO trains), and logs the mean return
  and success with item-level bootstrap CIs; its rollouts go to
  ``evals/<base|final>/results.jsonl`` of the run folder, for a paired lift. Every evaluation
  draws its samples from the same seeded stream (common random numbers), so the base and final
  models are compared on the same draws: the same weights give the same dialogues and a lift of
  exactly 0, and the paired lift does not carry the sampler's noise twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from hear_gym.core.run_folder import strict_json, write_text_atomic
from hear_gym.integrations.trl import HearGymEnvironment, environment_factory, episode_rows
from hear_gym.stats.bootstrap import RatioSums, ratio_ci
from training.llm.run_folder import CurveLog, main_process


class EpisodeHistory(list):
    """One dict per scored rollout, in order (training and evaluation alike)."""

    def environment_class(self, env_id: str, access: str, env_options: dict[str, Any]) -> type:
        """``env_id``'s factory class, recording each rollout here when TRL scores it. It keeps
        the factory's class name, which names TRL's reward column."""
        base = environment_factory(env_id, access=access, **env_options)
        history = self

        def get_reward(environment: HearGymEnvironment) -> float:
            reward = HearGymEnvironment.get_reward(environment)
            episode = environment.episode or {}
            history.append(
                {
                    "item_id": environment.item_id,
                    "reward": reward,
                    "success": float(bool(episode.get("success", False))),
                    "calls": len(environment.replies) - environment.played_out,
                    "invalid_calls": environment.invalid_calls,
                    "played_out": float(environment.played_out > 0),
                }
            )
            return reward

        return type(base.__name__, (base,), {"get_reward": get_reward, "__module__": base.__module__})

    def summary(self, rows: list[dict[str, Any]]) -> dict[str, float]:
        n = len(rows)
        calls = sum(r["calls"] for r in rows)
        return {
            "dialogues": n,
            "reward": sum(r["reward"] for r in rows) / n,
            "success": sum(r["success"] for r in rows) / n,
            "played_out_fraction": sum(r["played_out"] for r in rows) / n,
            "calls": calls / n,
            "invalid_call_rate": sum(r["invalid_calls"] for r in rows) / calls if calls else 0.0,
        }


def tools_dataset(env_id: str, item_ids: list[str], seed: int):
    from datasets import Dataset

    return Dataset.from_list(episode_rows(env_id, item_ids, seed=seed))


class ToolsCurveLog(CurveLog):
    """One row per logged optimizer step: the rollouts scored since the last row and TRL's loss
    and tool-call frequency; to ``curve.jsonl`` and W&B."""

    def __init__(self, history: EpisodeHistory, out: Path, wandb_run=None, writes: bool = True) -> None:
        super().__init__(out, wandb_run, writes)
        self.history, self.seen = history, 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" not in logs:  # the end-of-training summary, or an evaluation's
            return
        rows, self.seen = self.history[self.seen :], len(self.history)
        if not rows:
            return
        row = {"kind": "train", "step": int(state.global_step), **self.history.summary(rows)}
        row["loss"] = float(logs["loss"])
        row["tool_call_frequency"] = float(logs.get("tools/call_frequency", 0.0))
        self.write(row)


def evaluate_tools(
    trainer,
    history: EpisodeHistory,
    env_id: str,
    item_ids: list[str],
    seed: int,
    records: Path | None = None,
):
    """Play ``item_ids`` through the factory with the trainer's model (every process of a
    distributed launch takes part); returns the metrics (``return``, ``success``: point and 95%
    CI over items). ``records``: also write each rollout there as an episode record
    (``results.jsonl``: ``key``, ``item_id``, ``reward``, ...), which
    ``training.llm.heldout.paired_lift`` pairs by item."""
    from accelerate.utils import gather_object

    start = len(history)
    with seeded_sampler(seed + trainer.accelerator.process_index, trainer.accelerator.device):
        trainer.evaluate(eval_dataset=tools_dataset(env_id, item_ids, seed))
    rows = gather_object(history[start:])  # every process's share of the rollouts
    del history[start:]  # evaluation rollouts are not training rows of the curve
    if records is not None and main_process():
        records.parent.mkdir(parents=True, exist_ok=True)
        lines = (strict_json({"key": f"{r['item_id']}#{n}", **r}) + "\n" for n, r in enumerate(rows))
        write_text_atomic(records, "".join(lines))
    metrics = {}
    for metric, key in (("return", "reward"), ("success", "success")):
        sums = {s: [0.0, 0.0] for s in item_ids}
        for row in rows:
            sums[row["item_id"]][0] += row[key]
            sums[row["item_id"]][1] += 1
        numerator, denominator = (np.array(v) for v in zip(*sums.values(), strict=True))
        metrics[metric] = ratio_ci(RatioSums(numerator, denominator), seed=seed).as_dict()
    return metrics


@contextmanager
def seeded_sampler(seed: int, device) -> Iterator[None]:
    """Generation inside draws from torch's generators seeded with ``seed`` (the CPU's, and the
    GPU's the model runs on), and the run's own random state is restored after it, so training
    goes on as if no evaluation had sampled."""
    import torch

    devices = [device] if getattr(device, "type", str(device)).startswith("cuda") else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
