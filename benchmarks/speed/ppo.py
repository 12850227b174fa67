"""PPO training speed on Hear2Act against CartPole, and vectorized-env scaling, in one run.

Prints a table and writes benchmarks/out/speed_ppo.json. Reported (best of ``REPEATS``
interleaved passes each):
  * SB3 PPO environment steps per second on CartPole-v1 (``MlpPolicy``) and on Hear2Act-v0's
    feature observation under T (``MultiInputPolicy``), both with the same hidden layers (64, 64),
    both on one compute thread (``training.ppo.train.one_compute_thread``) and interleaved,
    4 envs in one process, 128 steps per env and rollout, 4 epochs; the ratio of their training
    times is the cost of the env and its observation relative to CartPole's. Also sb3-contrib's
    MaskablePPO on Hear2Act (what ``hear-gym train ppo`` runs), whose masking costs extra.
  * the env's share of Hear2Act training time: time inside the envs' ``step`` / wall time.
  * 2-process (``SubprocVecEnv``) vs 1-process (``DummyVecEnv``) throughput of 2 Hear2Act
    feature envs stepped with random valid actions (no learning), as a ratio, under T (text
    features, microseconds a step) and A+T (each new user turn rendered and measured). Every
    measurement runs in a fresh process, so no side starts with a warm render cache.
  * MaskablePPO on Hear2Act A+T with torch's and BLAS's default thread pools vs on one thread
    (``training.ppo.train.one_compute_thread``, as ``hear-gym train ppo`` runs), each in a fresh
    process over a warm render cache (as a run is after its first episodes; with a cold one,
    speech synthesis dominates), one training alone and two side by side (each its own process;
    steps/s per training): the pools contend with the audio measurements and with each other.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import multiprocessing
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

import hear_gym  # noqa: F401
from hear_gym.wrappers.episode_record import MoveEpisodeRecord
from training.ppo.train import one_compute_thread, silent_logger

OUT = Path(__file__).resolve().parents[1] / "out"
TRAIN_STEPS = 4_096
VEC_STEPS = {"T": 4_000, "A+T": 400}
THREAD_STEPS = 2_048
REPEATS = 3
PPO_KWARGS = dict(n_steps=128, batch_size=128, n_epochs=4, seed=0, device="cpu", verbose=0)
POLICY = {"net_arch": [64, 64]}


class StepClock(gym.Wrapper):
    """Adds the time spent in ``step`` (and ``reset``) to a shared counter."""

    def __init__(self, env: gym.Env, clock: list[float]) -> None:
        super().__init__(env)
        self.clock = clock

    def step(self, action):
        start = time.perf_counter()
        out = self.env.step(action)
        self.clock[0] += time.perf_counter() - start
        return out

    def reset(self, **kwargs):
        start = time.perf_counter()
        out = self.env.reset(**kwargs)
        self.clock[0] += time.perf_counter() - start
        return out


def hear2act_env(clock: list[float] | None = None, access: str = "T", **options) -> gym.Env:
    env = gym.make(
        "hear_gym/Hear2Act-v0",
        access=access,
        observation="features",
        feedback="prosody",
        disable_env_checker=True,
        **options,
    )
    env = Monitor(MoveEpisodeRecord(env))  # as hear-gym train ppo runs it
    return StepClock(env, clock) if clock is not None else env


def train_seconds(name: str) -> tuple[float, float]:
    """(wall seconds, seconds inside env steps) for TRAIN_STEPS of PPO, on one compute thread
    whichever the env (as ``hear-gym train ppo`` runs): with the default pools on one side only,
    a loaded machine slowed that side alone and the ratio meant nothing (0.51x once)."""
    with one_compute_thread():
        return _train_seconds(name)


def _train_seconds(name: str) -> tuple[float, float]:
    clock = [0.0]
    if name == "cartpole":
        envs = DummyVecEnv([lambda: StepClock(Monitor(gym.make("CartPole-v1")), clock)] * 4)
    else:
        envs = DummyVecEnv([lambda: hear2act_env(clock)] * 4)
    algorithm = MaskablePPO if name == "hear2act_masked" else PPO
    policy = "MlpPolicy" if name == "cartpole" else "MultiInputPolicy"
    model = algorithm(policy, envs, policy_kwargs=POLICY, **PPO_KWARGS)
    model.set_logger(silent_logger())
    clock[0] = 0.0
    start = time.perf_counter()
    model.learn(TRAIN_STEPS)
    wall = time.perf_counter() - start
    envs.close()
    return wall, clock[0]


def a_t_training_seconds(one_thread: bool, render_cache: str) -> float:
    """Wall seconds of ``THREAD_STEPS`` MaskablePPO steps on Hear2Act A+T (4 envs in one
    process), with the default thread pools or on one thread; ``render_cache``: the on-disk
    render cache, warm, as in a training run after its first episodes."""
    envs = DummyVecEnv([functools.partial(hear2act_env, None, "A+T", audio_cache_dir=render_cache)] * 4)
    model = MaskablePPO("MultiInputPolicy", envs, policy_kwargs=POLICY, **PPO_KWARGS)
    model.set_logger(silent_logger())
    with one_compute_thread() if one_thread else contextlib.nullcontext():
        start = time.perf_counter()
        model.learn(THREAD_STEPS)
        wall = time.perf_counter() - start
    envs.close()
    return wall


def vec_steps_per_second(kind: str, access: str) -> float:
    build = functools.partial(hear2act_env, None, access)
    envs = (SubprocVecEnv if kind == "subproc" else DummyVecEnv)([build] * 2)
    envs.seed(0)
    envs.reset()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(VEC_STEPS[access] // 2):
        masks = np.stack(envs.env_method("action_masks"))
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        envs.step(np.array(actions))
    rate = VEC_STEPS[access] / (time.perf_counter() - start)
    envs.close()
    return rate


def in_fresh_process(function, *args):
    return in_fresh_processes(1, function, *args)[0]


def in_fresh_processes(n: int, function, *args) -> list:
    """``function(*args)`` in ``n`` fresh processes at once (2 on 2 cores: the machine is full,
    as when two trainings run side by side)."""
    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [f.result() for f in [pool.submit(function, *args) for _ in range(n)]]


def main() -> dict:
    best: dict[str, tuple[float, float]] = {}
    vec: dict[tuple[str, str], float] = {}
    threads: dict[tuple[bool, int], float] = {}  # (one thread?, trainings at once) -> best wall s
    render_cache = tempfile.mkdtemp(prefix="hear_gym_speed_ppo_")
    in_fresh_process(a_t_training_seconds, True, render_cache)  # warms the render cache
    for _ in range(REPEATS):  # interleaved, so drifts in machine speed hit both sides
        for name in ("cartpole", "hear2act", "hear2act_masked"):
            wall, inside = train_seconds(name)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, inside)
        for access in VEC_STEPS:
            for kind in ("dummy", "subproc"):
                rate = in_fresh_process(vec_steps_per_second, kind, access)
                vec[kind, access] = max(vec.get((kind, access), 0.0), rate)
        for one_thread, side_by_side in itertools.product((False, True), (1, 2)):
            wall = max(in_fresh_processes(side_by_side, a_t_training_seconds, one_thread, render_cache))
            key = (one_thread, side_by_side)
            threads[key] = min(threads.get(key, wall), wall)
    shutil.rmtree(render_cache)
    result = {
        "train_steps": TRAIN_STEPS,
        "cartpole_steps_per_s": TRAIN_STEPS / best["cartpole"][0],
        "hear2act_steps_per_s": TRAIN_STEPS / best["hear2act"][0],
        "hear2act_maskable_steps_per_s": TRAIN_STEPS / best["hear2act_masked"][0],
        "train_time_ratio": best["hear2act"][0] / best["cartpole"][0],
        "hear2act_env_share": best["hear2act"][1] / best["hear2act"][0],
        "cartpole_env_share": best["cartpole"][1] / best["cartpole"][0],
        "vec": {
            access: {
                "1_process_steps_per_s": vec["dummy", access],
                "2_process_steps_per_s": vec["subproc", access],
                "2_vs_1_ratio": vec["subproc", access] / vec["dummy", access],
            }
            for access in VEC_STEPS
        },
        "a_t_maskable_steps_per_s": {
            f"{trainings}_at_once": {
                "default_threads": THREAD_STEPS / threads[False, trainings],
                "one_thread": THREAD_STEPS / threads[True, trainings],
                "one_vs_default_ratio": threads[False, trainings] / threads[True, trainings],
            }
            for trainings in (1, 2)
        },
    }
    table = Table("measure", "value", title=f"PPO speed (best of {REPEATS}, {TRAIN_STEPS} steps each)")
    table.add_row("SB3 PPO steps/s, CartPole-v1", f"{result['cartpole_steps_per_s']:.0f}")
    table.add_row("SB3 PPO steps/s, Hear2Act-v0 features (T)", f"{result['hear2act_steps_per_s']:.0f}")
    table.add_row("MaskablePPO steps/s, Hear2Act-v0", f"{result['hear2act_maskable_steps_per_s']:.0f}")
    table.add_row("training time, Hear2Act / CartPole", f"{result['train_time_ratio']:.2f}x")
    table.add_row("env share of training time, Hear2Act", f"{100 * result['hear2act_env_share']:.1f}%")
    table.add_row("env share of training time, CartPole", f"{100 * result['cartpole_env_share']:.1f}%")
    for access, row in result["vec"].items():
        table.add_row(
            f"vectorized steps/s, {access}, 2 envs in 1 process", f"{row['1_process_steps_per_s']:.0f}"
        )
        table.add_row(
            f"vectorized steps/s, {access}, 2 envs in 2 processes", f"{row['2_process_steps_per_s']:.0f}"
        )
        table.add_row(f"2-process / 1-process, {access}", f"{row['2_vs_1_ratio']:.2f}x")
    for trainings, rates in result["a_t_maskable_steps_per_s"].items():
        at_once = trainings.replace("_", " ")
        table.add_row(
            f"MaskablePPO steps/s, A+T, {at_once}, default pools", f"{rates['default_threads']:.0f}"
        )
        table.add_row(f"MaskablePPO steps/s, A+T, {at_once}, one thread", f"{rates['one_thread']:.0f}")
        table.add_row(f"one thread / default pools, A+T, {at_once}", f"{rates['one_vs_default_ratio']:.2f}x")
    Console().print(table)
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_ppo.json").write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
