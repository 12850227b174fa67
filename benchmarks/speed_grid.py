"""Wall time of the full Hear2Act grid for the rule and classifier agents: all 480 scenarios x
both feedback realizations x every condition of ``hear2act_audio_grid`` (T, A+T, T+S, T+S^, two
T+SER, three ladder rungs), eSpeak renderer, 2 worker processes. Measured twice in one run:
cold (empty disk render cache) and warm (a second evaluation into new run folders over the same
disk cache). Both the render cache and the feature store (under ``HEAR_GYM_CACHE``) start empty
for the cold pass and are what the warm pass reuses. Probe training is not timed (probes from ``hear2act_audio_grid``, trained if
missing). Targets: <= 10 min cold, <= 1 min warm. Writes benchmarks/out/speed_grid.json.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from benchmarks.hear2act_audio_grid import AGENTS, runs_for, train_probes
from hear_gym.envs.hear2act.family import run_config
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.eval.pipeline import evaluate

OUT = Path(__file__).parent / "out" / "speed_grid"
WORKERS = 2


def run_grid(tag: str, probes, cache_dir: Path) -> tuple[float, int]:
    scenario_ids = tuple(s.scenario_id for s in scenario_bank())
    start, episodes = time.perf_counter(), 0
    for run, (cells, env_kwargs, objects) in runs_for("espeak", probes).items():
        plugins = tuple((k, type(v).__name__) for k, v in objects.items())
        config = run_config(cells, scenario_ids, plugins=plugins, **env_kwargs)
        evaluate(
            OUT / f"{tag}_{run}",
            config,
            AGENTS,
            progress=False,
            workers=WORKERS,
            env_objects={**objects, "audio_cache_dir": cache_dir},
        )
        episodes += len(cells) * len(scenario_ids)
    return time.perf_counter() - start, episodes


def main() -> dict:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    probes = train_probes("espeak")
    os.environ["HEAR_GYM_CACHE"] = str(OUT / "cache_root")  # fresh feature store; workers inherit it
    cache_dir = OUT / "audio_cache"
    cold, episodes = run_grid("cold", probes, cache_dir)
    warm, _ = run_grid("warm", probes, cache_dir)
    results = {
        "episodes": episodes,
        "workers": WORKERS,
        "cold_s": cold,
        "warm_s": warm,
        "targets_s": {"cold": 600, "warm": 60},
    }
    print(json.dumps(results, indent=2))
    (OUT.parent / "speed_grid.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
