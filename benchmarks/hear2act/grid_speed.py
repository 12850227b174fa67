"""Wall and CPU time of the full Hear2Act grid for the rule and classifier agents: all 480
scenarios x both feedback realizations x every condition of ``benchmarks.hear2act.audio_grid`` (T, A+T,
T+S, T+S^, two T+SER, three ladder rungs), eSpeak renderer, 2 worker processes. Measured twice
in one run: cold (empty disk render cache and feature store) and warm (a second evaluation into
new run folders over the same disk caches, with new workers, so nothing is reused from memory).
Each pass opens one ``WorkerPool`` that its five evaluations share. CPU time is this process's
plus its workers' (user + system), a figure a loaded machine inflates far less than wall time.

Probe training is not timed (probes from ``benchmarks.hear2act.audio_grid``, trained if missing).
Targets: <= 60 s cold, <= 10 s warm on 2 cores. Writes benchmarks/out/speed_grid.json.

    python -m benchmarks.hear2act.grid_speed                              # the measurement
    python -m benchmarks.hear2act.grid_speed --scenarios 60 --profile   # where the time goes

``--profile`` plays each pass in one fresh process under cProfile, timed in CPU seconds (no
worker pool; a fresh process, so the warm pass finds nothing in memory) and writes
``benchmarks/out/speed_grid_<pass>.pstats`` and the top functions by cumulative time.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import multiprocessing
import os
import pstats
import resource
import shutil
import time
from pathlib import Path

from benchmarks.hear2act.audio_grid import AGENTS, TRAIN_SCENARIOS, runs_for, train_probes
from hear_gym.envs.hear2act.family import run_config
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.pool import WorkerPool
from hear_gym.speech.cache import DISK_CAP_ENV

OUT = Path(__file__).resolve().parents[1] / "out" / "speed_grid"
WORKERS = 2
TARGETS_S = {"cold": 60, "warm": 10}
AUDIO_CAP = "8G"


def cpu_seconds() -> float:
    """User + system CPU of this process and of its finished (joined) children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_grid(tag: str, probes, cache_dir: Path, item_ids: tuple[str, ...], workers: int) -> dict:
    """One pass over every run of the grid (``workers=0``: in this process); the pool's workers
    are joined before CPU is read."""
    start_wall, start_cpu, episodes = time.perf_counter(), cpu_seconds(), 0
    pool = WorkerPool(workers) if workers else None
    with pool or contextlib.nullcontext():
        for run, (cells, env_kwargs, objects) in runs_for("espeak", probes).items():
            plugins = tuple((k, type(v).__name__) for k, v in objects.items())
            config = run_config(cells, item_ids, plugins=plugins, **env_kwargs)
            evaluate(
                OUT / f"{tag}_{run}",
                config,
                AGENTS,
                progress=False,
                env_objects={**objects, "audio_cache_dir": cache_dir},
                pool=pool,
            )
            episodes += len(cells) * len(item_ids)
    return {
        "wall_s": time.perf_counter() - start_wall,
        "cpu_s": cpu_seconds() - start_cpu,
        "episodes": episodes,
    }


def profiled(tag: str, probes, cache_dir: Path, item_ids: tuple[str, ...]) -> dict:
    profile = cProfile.Profile(time.process_time)  # CPU time: a loaded machine stretches wall time
    result = profile.runcall(run_grid, tag, probes, cache_dir, item_ids, 0)
    path = OUT.parent / f"speed_grid_{tag}.pstats"
    profile.dump_stats(path)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(45)
    print(f"--- {tag} pass profile ({path}) ---\n{text.getvalue()}")
    return result


def in_fresh_process(function, *args):
    with multiprocessing.get_context("spawn").Pool(1) as process:
        return process.apply(function, args)


def main(workers: int = WORKERS, n_scenarios: int | None = None, profile: bool = False) -> dict:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    probes = train_probes("espeak", TRAIN_SCENARIOS)
    os.environ["HEAR_GYM_CACHE"] = str(OUT / "cache_root")  # fresh feature store; workers inherit it
    # The grid's audio (about 2.7 GiB) passes the render store's default cap (2 GiB): under it the
    # cold pass evicts its first clips and the warm pass renders them again.
    os.environ.setdefault(DISK_CAP_ENV, AUDIO_CAP)
    cache_dir = OUT / "audio_cache"
    item_ids = tuple(s.scenario_id for s in scenario_bank())[:n_scenarios]
    if profile:
        cold, warm = (
            in_fresh_process(profiled, tag, probes, cache_dir, item_ids) for tag in ("cold", "warm")
        )
    else:
        cold, warm = (run_grid(tag, probes, cache_dir, item_ids, workers) for tag in ("cold", "warm"))
    results = {
        "episodes": cold["episodes"],
        "scenarios": len(item_ids),
        "workers": 1 if profile else workers,
        "profiled": profile,
        "load_average": os.getloadavg(),
        "audio_bytes": sum(p.stat().st_size for p in cache_dir.rglob("*.f32")),
        "cold": {k: v for k, v in cold.items() if k != "episodes"},
        "warm": {k: v for k, v in warm.items() if k != "episodes"},
        "targets_wall_s": TARGETS_S,
    }
    print(json.dumps(results, indent=2))
    name = (
        "speed_grid.json"
        if (workers, n_scenarios, profile) == (WORKERS, None, False)
        else "speed_grid_slice.json"
    )
    (OUT.parent / name).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=WORKERS, help="worker processes in the pool")
    parser.add_argument("--scenarios", type=int, help="only the first N scenarios of the bank (a slice)")
    parser.add_argument("--profile", action="store_true", help="cProfile each pass in one fresh process")
    args = parser.parse_args()
    main(args.workers, args.scenarios, args.profile)
