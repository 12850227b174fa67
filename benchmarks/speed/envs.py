"""Step cost of every registered env, against CartPole-v1 measured in the same process.

Prints a table and writes benchmarks/out/speed_envs.json. One row per env id, access condition
and observation format, all taken from the registry (``hear_gym.core.registry``) and the shared
formats (``hear_gym.wrappers.stack.OBSERVATION_FORMATS``), so a new family appears by itself.

Each row: both envs built by ``gym.make`` (default wrappers, env checker on), stepped with random
valid actions (the env's ``action_masks``), resets included in the clock. A warm-up pass of the
row's env (``--seconds`` long) fixes a sequence of steps from seed 0 and warms the render caches;
each timed pass then replays that same sequence (reset with the same seed) as many times as fill
about ``--seconds``, so every timed step of an audio condition is a warm one. The env's and
CartPole's passes alternate (interleaved), and each side's best of ``REPEATS`` passes is kept, so
drifts in machine load hit both sides. Both sides run on one compute thread (BLAS through
threadpoolctl), as ``hear-gym train ppo`` runs. ``--cpu-time`` clocks this process's CPU time
instead of wall time: on a loaded machine the wall clock also counts waiting for a core.

Targets: under the text-only conditions <= 3x CartPole with the dict observation and
<= 5x with features; every audio condition <= 15x.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import threadpoolctl
from rich.console import Console
from rich.table import Table

from hear_gym.core import registry
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.wrappers.stack import OBSERVATION_FORMATS

OUT = Path(__file__).resolve().parents[1] / "out"
Clock = Callable[[], float]
REPEATS = 3
SEED = 0
MIN_STEPS = 20  # a warm-up plays at least these, however slow its cold steps are
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
TARGETS = {
    ("text", "dict"): 3.0,
    ("text", "features"): 5.0,
    ("audio", "dict"): 15.0,
    ("audio", "features"): 15.0,
}


def play(
    env: gym.Env, steps: int | None = None, seconds: float | None = None, clock: Clock = time.perf_counter
) -> tuple[int, float]:
    """(steps played, seconds inside ``reset``/``step``) from ``reset(seed=SEED)``: exactly
    ``steps`` steps, or as many as ``seconds`` allow (at least ``MIN_STEPS``). Random valid
    actions from a generator seeded alike, so two calls with the same ``steps`` play the same
    sequence."""
    draws = np.random.default_rng(SEED)
    masks = getattr(env.unwrapped, "action_masks", None)
    actions = np.arange(env.action_space.n)
    start = clock()
    env.reset(seed=SEED)
    inside = clock() - start
    done = 0
    while done < steps if steps is not None else (done < MIN_STEPS or inside < seconds):
        valid = actions if masks is None else np.flatnonzero(masks())
        action = int(valid[int(draws.random() * len(valid))])
        start = clock()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
        inside += clock() - start
        done += 1
    return done, inside


class Side:
    """One env of a row: its warm sequence and its best seconds per step."""

    def __init__(self, env: gym.Env, seconds: float, clock: Clock = time.perf_counter) -> None:
        self.env, self.clock = env, clock
        self.steps, _ = play(env, seconds=seconds, clock=clock)  # warm-up: fixes (and warms) the sequence
        self.replays = max(1, round(seconds / play(env, self.steps, clock=clock)[1]))
        self.best = float("inf")

    def timed_pass(self) -> None:
        inside = sum(play(self.env, self.steps, clock=self.clock)[1] for _ in range(self.replays))
        self.best = min(self.best, inside / (self.replays * self.steps))


def kind(env_id: str, access: str) -> str:
    """``"audio"`` when the access condition's dict observation carries audio, else ``"text"``."""
    env = gym.make(env_id, access=access, observation="dict")
    has_audio = "audio" in env.observation_space.spaces
    env.close()
    return "audio" if has_audio else "text"


def measure_row(
    env_id: str,
    access: str,
    observation: str,
    seconds: float,
    env_kwargs: dict | None = None,
    clock: Clock = time.perf_counter,
) -> dict:
    try:
        built = gym.make(env_id, access=access, observation=observation, **(env_kwargs or {}))
    except ValueError as error:  # a condition that needs more than default kwargs (a model, ...)
        return {"env_id": env_id, "access": access, "observation": observation, "skipped": str(error)}
    cartpole = Side(gym.make("CartPole-v1"), seconds, clock)
    env = Side(built, seconds, clock)
    for _ in range(REPEATS):
        cartpole.timed_pass()
        env.timed_pass()
    condition = kind(env_id, access)
    target = TARGETS[condition, observation]
    ratio = env.best / cartpole.best
    return {
        "env_id": env_id,
        "access": access,
        "observation": observation,
        "kind": condition,
        "step_us": env.best * 1e6,
        "cartpole_us": cartpole.best * 1e6,
        "ratio": ratio,
        "target": target,
        "met": ratio <= target,
        "steps_per_pass": env.steps * env.replays,
    }


def main(
    seconds: float,
    env_filter: list[str] | None = None,
    env_kwargs: dict | None = None,
    clock_name: str = "wall",
) -> list[dict]:
    registry.register_envs()
    rows = []
    with threadpoolctl.threadpool_limits(1):
        for env_id in registry.env_ids():
            if env_filter and not any(f in env_id for f in env_filter):
                continue
            for access in registry.family(env_id).access_conditions:
                for observation in OBSERVATION_FORMATS:
                    rows.append(
                        measure_row(env_id, access, observation, seconds, env_kwargs, CLOCKS[clock_name])
                    )
    table = Table(
        "env",
        "access",
        "observation",
        "step (us)",
        "CartPole (us)",
        "x CartPole",
        "target",
        title=f"Env step cost (best of {REPEATS} interleaved passes of ~{seconds:g} s, resets included, "
        f"{clock_name} clock, load average {os.getloadavg()[0]:.1f})",
    )
    skipped = []
    for row in rows:
        if "skipped" in row:
            skipped.append(f"{row['env_id']} {row['access']} {row['observation']}: {row['skipped']}")
            continue
        table.add_row(
            row["env_id"].removeprefix("hear_gym/"),
            row["access"],
            row["observation"],
            f"{row['step_us']:.1f}",
            f"{row['cartpole_us']:.1f}",
            f"{row['ratio']:.2f}",
            f"<= {row['target']:g}x {'met' if row['met'] else 'MISSED'}",
        )
    console = Console(width=120)
    console.print(table)
    for line in skipped:
        console.print(f"skipped {line}", highlight=False)
    OUT.mkdir(exist_ok=True)
    write_json_atomic(
        OUT / "speed_envs.json",
        {
            "seconds_per_pass": seconds,
            "repeats": REPEATS,
            "env_kwargs": env_kwargs or {},
            "clock": clock_name,
            "rows": rows,
        },
    )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=0.3,
        help="length of the warm-up and of each timed pass (default 0.3)",
    )
    parser.add_argument(
        "--env", action="append", help="only env ids containing this text (repeatable; default: every id)"
    )
    parser.add_argument(
        "--env-kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="passed to every gym.make, e.g. renderer=praat (repeatable; use with --env)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="clock this process's CPU time, not wall time (steadier on a loaded machine)",
    )
    arguments = parser.parse_args()
    if not arguments.seconds > 0:
        parser.error(f"--seconds must be a positive number of seconds, got {arguments.seconds}")
    pairs = [pair.partition("=") for pair in arguments.env_kwarg]
    if any(not sep or not key for key, sep, _ in pairs):
        parser.error(f"--env-kwarg takes KEY=VALUE, got {arguments.env_kwarg}")
    env_kwargs = {key: value for key, _, value in pairs}
    main(arguments.seconds, arguments.env, env_kwargs, "cpu" if arguments.cpu_time else "wall")
