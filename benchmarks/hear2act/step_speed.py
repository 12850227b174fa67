"""Hear2Act env speed, measured against Gymnasium's CartPole in the same run.

Prints a table and writes benchmarks/out/speed_hear2act.json. Reported:
  * step ratios under the text conditions (T and T+S, dict and features observations): one
    Hear2Act step / one CartPole step, both built by ``gym.make`` (default wrappers, env checker
    on), resets included, each replaying a fixed sequence of random valid actions (drawn once
    from seed 0, as ``benchmarks.speed.envs`` draws them) in interleaved passes, best pass of each.
    Targets: <= 3x with the dict observation, <= 5x with features.
  * full-bank throughput: episodes/s for the state-aware rule agent over all 480 scenarios
    (agent time included) and for scripted episodes (env only).

``--clock cpu`` times the passes in this process's CPU time instead of wall time: on a machine
loaded by other work the process is descheduled for stretches that wall time counts against
whichever side was running, while CPU time counts only what each side ran.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import threadpoolctl
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401
from agents.hear2act.baselines import StateAwareAgent
from hear_gym.envs.hear2act.actions import ASK_GENERAL, RECOMMEND0
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank

STEPS = 20_000
REPEATS = 7
OUT = Path(__file__).resolve().parents[1] / "out"
ROWS = (("T", "dict"), ("T", "features"), ("T+S", "dict"), ("T+S", "features"))
TARGETS = {"dict": 3.0, "features": 5.0}
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def random_valid_actions(env: gym.Env, n: int) -> list[int]:
    """``n`` random valid actions (the env's ``action_masks`` where it has them) from a play of
    ``env`` from seed 0, resetting where an episode ends; replayed from ``reset(seed=0)`` they
    play the same episodes."""
    draws = np.random.default_rng(0)
    masks = getattr(env.unwrapped, "action_masks", None)
    every = np.arange(env.action_space.n)
    env.reset(seed=0)
    actions = []
    for _ in range(n):
        valid = every if masks is None else np.flatnonzero(masks())
        actions.append(int(valid[int(draws.random() * len(valid))]))
        _, _, terminated, truncated, _ = env.step(actions[-1])
        if terminated or truncated:
            env.reset()
    return actions


def time_pass(env: gym.Env, actions: list[int], clock) -> float:
    """Seconds per step of one replay of ``actions``, resets included."""
    step, reset = env.step, env.reset
    start = clock()
    reset(seed=0)
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            reset()
    return (clock() - start) / len(actions)


def step_ratios(clock_name: str) -> list[dict]:
    """Every row and CartPole, interleaved passes on one compute thread; best pass of each."""
    envs = {"cartpole": gym.make("CartPole-v1")}
    envs.update({row: gym.make("hear_gym/Hear2Act-v0", access=row[0], observation=row[1]) for row in ROWS})
    actions = {key: random_valid_actions(env, STEPS) for key, env in envs.items()}  # also warms
    best = dict.fromkeys(envs, float("inf"))
    with threadpoolctl.threadpool_limits(1):
        for _ in range(REPEATS):
            for key, env in envs.items():
                best[key] = min(best[key], time_pass(env, actions[key], CLOCKS[clock_name]))
    return [
        {
            "access": access,
            "observation": observation,
            "step_us": best[access, observation] * 1e6,
            "cartpole_us": best["cartpole"] * 1e6,
            "ratio": best[access, observation] / best["cartpole"],
            "target": TARGETS[observation],
        }
        for access, observation in ROWS
    ]


def scripted_actions(n: int) -> np.ndarray:
    # Asks and recommendations, never confirm: episodes run to the 20-turn budget, so
    # transcripts reach their full length and the measurement is not flattered by short ones.
    rng = np.random.default_rng(0)
    return np.where(rng.random(n) < 0.5, ASK_GENERAL, RECOMMEND0 + rng.integers(0, 11, n))


def bank_throughput() -> dict:
    env = gym.make("hear_gym/Hear2Act-v0", split="all", access="T+S", disable_env_checker=True)
    agent = StateAwareAgent()
    start = time.perf_counter()
    for i, scenario in enumerate(scenario_bank()):
        obs, _ = env.reset(seed=i, options={"item_id": scenario.scenario_id})
        agent.reset(seed=i)
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
    agent_eps = len(scenario_bank()) / (time.perf_counter() - start)

    raw = gym.make("hear_gym/Hear2Act-v0", split="all", disable_env_checker=True)
    actions = scripted_actions(19)
    start = time.perf_counter()
    for i, scenario in enumerate(scenario_bank()):
        raw.reset(seed=i, options={"item_id": scenario.scenario_id})
        for a in actions:
            raw.step(int(a))
    env_eps = len(scenario_bank()) / (time.perf_counter() - start)
    return {"episodes_per_s_state_aware_agent": agent_eps, "episodes_per_s_env_only_20_turns": env_eps}


def main(clock: str) -> dict:
    rows = step_ratios(clock)
    results = {"clock": clock, "steps": STEPS, "repeats": REPEATS, "rows": rows, **bank_throughput()}

    table = Table(title=f"Hear2Act speed (one run, best of {REPEATS} interleaved passes, {clock} clock)")
    for col in ("access", "observation", "CartPole", "Hear2Act", "x CartPole", "target"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["access"],
            r["observation"],
            f"{r['cartpole_us']:.2f} us",
            f"{r['step_us']:.2f} us",
            f"{r['ratio']:.2f}",
            f"<= {r['target']:g}x {'met' if r['ratio'] <= r['target'] else 'MISSED'}",
        )
    Console().print(table)
    print(
        f"full bank: {results['episodes_per_s_state_aware_agent']:.0f} episodes/s with the state-aware agent,"
    )
    print(f"{results['episodes_per_s_env_only_20_turns']:.0f} episodes/s scripted (env only, 20 turns)")
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_hear2act.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="what times a pass (default wall)"
    )
    main(parser.parse_args().clock)
