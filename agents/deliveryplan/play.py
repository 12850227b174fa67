"""Play a DeliveryPlan control (access T, strict JSON text actions) or a PPO checkpoint (greedy,
feature observation) over chosen cases through the env and return each case's metric row: what
the benchmarks, the shortcut tests and the learning test share."""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import hear_gym  # noqa: F401  (registers the envs)
from agents.deliveryplan.baselines import CONTROL_AGENTS
from hear_gym.envs.deliveryplan.report import case_metric_rows


def play_control(
    control: str, case_ids: Sequence[str], partition: str = "public", seed: int = 0
) -> list[dict]:
    env = gym.make(
        "hear_gym/DeliveryPlan-v0", access="T", actions="text", item_ids=list(case_ids), partition=partition
    )
    agent = CONTROL_AGENTS[control](seed=seed, partition=partition)
    rows = []
    for index, case_id in enumerate(case_ids):
        # seeded once: each episode then draws its own record order and ids
        obs, _ = env.reset(seed=seed if index == 0 else None, options={"item_id": case_id})
        agent.reset(seed=index)
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.act(obs))
        rows.append(case_metric_rows(info["episode"]))
    return rows


def play_checkpoint(checkpoint, case_ids: Sequence[str], seed: int = 0) -> list[dict]:
    """A PPO checkpoint played greedily on the T feature observation."""
    from agents.ppo import GreedyPPOAgent

    agent = GreedyPPOAgent.from_checkpoint(checkpoint)
    env = gym.make("hear_gym/DeliveryPlan-v0", access="T", observation="features", item_ids=list(case_ids))
    rows = []
    for index, case_id in enumerate(case_ids):
        obs, _ = env.reset(seed=seed if index == 0 else None, options={"item_id": case_id})
        agent.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.act(obs))
        rows.append(case_metric_rows(info["episode"]))
    return rows


def mean_rows(rows: Sequence[dict], metrics: Sequence[str]) -> dict[str, float]:
    return {m: float(np.mean([r[m] for r in rows])) for m in metrics}
