"""Hear2Act env speed, measured against Gymnasium's CartPole in the same run.

Prints a table and writes benchmarks/out/speed_hear2act.json. Reported:
  * step ratio: time of one Hear2Act step (text observation, raw env) / one CartPole step (raw
    env), both driven by fixed, pre-drawn action sequences, in interleaved passes (best pass of
    each); target <= 3x.
  * the same ratio with both envs built by gym.make (default wrappers, env checker on).
  * full-bank throughput: episodes/s for the state-aware rule agent over all 480 scenarios
    (agent time included) and for scripted episodes (env only).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401
from agents.hear2act.baselines import StateAwareAgent
from hear_gym.envs.hear2act.actions import ASK_GENERAL, RECOMMEND0
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank

STEPS = 20_000
REPEATS = 7
OUT = Path(__file__).parent / "out"


def time_steps(env: gym.Env, actions: np.ndarray, seed: int) -> float:
    """Seconds per step over one pass of ``actions`` (resets excluded from the clock)."""
    env.reset(seed=seed)
    elapsed, i = 0.0, 0
    while i < len(actions):
        start = time.perf_counter()
        while i < len(actions):
            _, _, terminated, truncated, _ = env.step(int(actions[i]))
            i += 1
            if terminated or truncated:
                break
        elapsed += time.perf_counter() - start
        env.reset()
    return elapsed / len(actions)


def hear2act_actions(n: int) -> np.ndarray:
    # Asks and recommendations, never confirm: episodes run to the 20-turn budget, so
    # transcripts reach their full length and the measurement is not flattered by short ones.
    rng = np.random.default_rng(0)
    return np.where(rng.random(n) < 0.5, ASK_GENERAL, RECOMMEND0 + rng.integers(0, 11, n))


def step_ratios() -> dict:
    """Both envs, raw and through gym.make, timed in interleaved passes; best pass of each."""
    envs = {
        ("raw", "cartpole"): gym.make("CartPole-v1").unwrapped,
        ("raw", "hear2act"): gym.make("hear_gym/Hear2Act-v0", split="all").unwrapped,
        ("gym_make", "cartpole"): gym.make("CartPole-v1"),
        ("gym_make", "hear2act"): gym.make("hear_gym/Hear2Act-v0", split="all"),
    }
    actions = {
        "cartpole": np.random.default_rng(0).integers(0, 2, STEPS),
        "hear2act": hear2act_actions(STEPS),
    }
    best = dict.fromkeys(envs, float("inf"))
    for repeat in range(REPEATS):
        for (mode, name), env in envs.items():
            best[mode, name] = min(best[mode, name], time_steps(env, actions[name], repeat))
    return {
        mode: {
            "cartpole_us": best[mode, "cartpole"] * 1e6,
            "hear2act_us": best[mode, "hear2act"] * 1e6,
            "ratio": best[mode, "hear2act"] / best[mode, "cartpole"],
        }
        for mode in ("raw", "gym_make")
    }


def bank_throughput() -> dict:
    env = gym.make("hear_gym/Hear2Act-v0", split="all", access="T+S", disable_env_checker=True)
    agent = StateAwareAgent()
    start = time.perf_counter()
    for i, scenario in enumerate(scenario_bank()):
        obs, _ = env.reset(seed=i, options={"scenario_id": scenario.scenario_id})
        agent.reset(seed=i)
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
    agent_eps = len(scenario_bank()) / (time.perf_counter() - start)

    raw = gym.make("hear_gym/Hear2Act-v0", split="all", disable_env_checker=True)
    actions = hear2act_actions(19)
    start = time.perf_counter()
    for i, scenario in enumerate(scenario_bank()):
        raw.reset(seed=i, options={"scenario_id": scenario.scenario_id})
        for a in actions:
            raw.step(int(a))
    env_eps = len(scenario_bank()) / (time.perf_counter() - start)
    return {"episodes_per_s_state_aware_agent": agent_eps, "episodes_per_s_env_only_20_turns": env_eps}


def main() -> dict:
    ratios = step_ratios()
    raw, made = ratios["raw"], ratios["gym_make"]
    results = {**ratios, **bank_throughput(), "target_ratio": 3.0}

    table = Table(title=f"Hear2Act speed (one run, best of {REPEATS})")
    for col in ("measure", "CartPole", "Hear2Act", "ratio (target <= 3)"):
        table.add_column(col)
    for name, r in (("step, raw env", raw), ("step, gym.make wrappers", made)):
        table.add_row(name, f"{r['cartpole_us']:.2f} us", f"{r['hear2act_us']:.2f} us", f"{r['ratio']:.2f}x")
    table.add_row(
        "full bank, state-aware agent", "", f"{results['episodes_per_s_state_aware_agent']:.0f} ep/s", ""
    )
    table.add_row(
        "full bank, env only (20 turns)", "", f"{results['episodes_per_s_env_only_20_turns']:.0f} ep/s", ""
    )
    Console().print(table)
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_hear2act.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
