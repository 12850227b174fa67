"""First-epoch audio: how fast does A+T PPO train from its first step, cold, after
``hear-gym render --turns all``, and warm?

MaskablePPO on Hear2Act's feature observation under A+T (prosody-mediated feedback; 4 envs in
one process, 128 steps per env and rollout, 4 epochs, hidden layers (64, 64), one compute thread,
as ``hear-gym train ppo`` runs) over the first ``SCENARIOS`` training scenarios, ``STEPS`` steps,
each training in a fresh process (nothing in memory) with its own cache folder
(``HEAR_GYM_CACHE``):

* cold: empty stores; every new turn is rendered and measured as it is first heard;
* prewarmed: the stores filled first by the prewarm ``hear-gym render --split train --turns all
  --feedback prosody --no-audio`` runs (every turn those scenarios' users can say, their prosodic
  features only, in ``WORKERS`` processes; its own wall and CPU time reported);
* warm: the prewarmed training again, so every turn it hears is stored (the speed a run has once
  its turns are measured).

Steps per second from ``model.learn`` alone. Target: prewarmed >= 0.5x warm. Writes
benchmarks/out/speed_first_epoch.json.

    python -m benchmarks.speed.first_epoch
    python -m benchmarks.speed.first_epoch --scenarios 4 --steps 512   # a quick look
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "out"
SCENARIOS = 12
STEPS = 2_048
WORKERS = 2
TARGET = 0.5


def train_steps_per_second(cache_root: str, item_ids: tuple[str, ...], steps: int) -> float:
    """In a fresh process: MaskablePPO steps per second over ``steps`` steps, stores in
    ``cache_root``."""
    os.environ["HEAR_GYM_CACHE"] = cache_root
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from benchmarks.speed.ppo import POLICY, PPO_KWARGS, hear2act_env
    from training.ppo.train import one_compute_thread, silent_logger

    def build():
        return hear2act_env(None, "A+T", item_ids=list(item_ids))

    envs = DummyVecEnv([build] * 4)
    model = MaskablePPO("MultiInputPolicy", envs, policy_kwargs=POLICY, **PPO_KWARGS)
    model.set_logger(silent_logger())
    with one_compute_thread():
        start = time.perf_counter()
        model.learn(steps)
        wall = time.perf_counter() - start
    envs.close()
    return steps / wall


def prewarm_stores(cache_root: str, item_ids: tuple[str, ...], workers: int) -> dict:
    """In a fresh process: what ``hear-gym render --turns all --feedback prosody --no-audio``
    does for these scenarios; its wall and CPU time (its workers included)."""
    os.environ["HEAR_GYM_CACHE"] = cache_root
    from hear_gym.envs.hear2act.prerender import possible_requests
    from hear_gym.speech.prewarm import prewarm

    start, cpu = time.perf_counter(), _cpu_seconds()
    requests = possible_requests(item_ids, ["prosody"], "paper")
    tally = prewarm(requests, "espeak", None, workers=workers, features=True, progress=False)
    return {
        "utterances": len(requests),
        "measured": tally.measured,
        "wall_s": time.perf_counter() - start,
        "cpu_s": _cpu_seconds() - cpu,
    }


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fresh(function, *args):
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def main(n_scenarios: int = SCENARIOS, steps: int = STEPS, workers: int = WORKERS) -> dict:
    from hear_gym.envs.hear2act.scenarios.bank import scenarios_for

    item_ids = tuple(s.scenario_id for s in scenarios_for("train")[:n_scenarios])
    with tempfile.TemporaryDirectory(prefix="hear_gym_first_epoch_") as folder:
        cold_root, warm_root = str(Path(folder) / "cold"), str(Path(folder) / "prewarmed")
        cold = fresh(train_steps_per_second, cold_root, item_ids, steps)
        prewarm = fresh(prewarm_stores, warm_root, item_ids, workers)
        prewarmed = fresh(train_steps_per_second, warm_root, item_ids, steps)
        warm = fresh(train_steps_per_second, warm_root, item_ids, steps)
    result = {
        "scenarios": n_scenarios,
        "steps": steps,
        "load_average": os.getloadavg(),
        "steps_per_s": {"cold": cold, "prewarmed": prewarmed, "warm": warm},
        "prewarmed_over_warm": prewarmed / warm,
        "cold_over_warm": cold / warm,
        "prewarm": prewarm,
        "target_prewarmed_over_warm": TARGET,
    }
    print(json.dumps(result, indent=2))
    OUT.mkdir(exist_ok=True)
    name = (
        "speed_first_epoch.json"
        if (n_scenarios, steps) == (SCENARIOS, STEPS)
        else "speed_first_epoch_slice.json"
    )
    (OUT / name).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=SCENARIOS, help="the first N training scenarios")
    parser.add_argument("--steps", type=int, default=STEPS, help="PPO steps per training")
    parser.add_argument("--workers", type=int, default=WORKERS, help="processes the prewarm renders in")
    args = parser.parse_args()
    main(args.scenarios, args.steps, args.workers)
