"""What TRL's ``environment_factory`` adapter (``hear_gym.integrations.trl``) costs over in-process
text play, for every registered env.

Prints a table and writes benchmarks/out/trl_factory.json. Per env id (from the registry, so a new
family appears by itself): ``--episodes`` train episodes, each played through the factory by a
seeded random tool policy (a random tool per call, arguments drawn from the observation's words
and small integers, unfinished episodes played out by ``get_reward``); then the same episodes,
same seeds and the very replies the factory played, in-process on the family's text env
(``make(actions="text")``, one env per episode, as the factory builds one). Both clocks include
building the env and resetting it. The returns must agree; the ratio is factory time over
in-process time, best of ``REPEATS`` passes each, passes interleaved.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.integrations.trl import environment_factory, episode_rows, tool_set

OUT = Path(__file__).resolve().parents[1] / "out"
REPEATS = 3
MAX_CALLS = 12


def through_factory(env_id: str, rows: list[dict]) -> tuple[list[float], list[list[str]]]:
    cls = environment_factory(env_id)
    tools = tool_set(env_id).tools
    returns, replies = [], []
    for row in rows:
        environment = cls()
        words = [*environment.reset(**row).split()[:20], "", "7"]
        rng = np.random.default_rng(row["seed"])
        for _ in range(MAX_CALLS):
            if environment.done:
                break
            tool = tools[int(rng.integers(len(tools)))]
            arguments = {
                p.name: int(rng.integers(0, 13)) if p.kind is int else str(rng.choice(words))
                for p in tool.params
            }
            getattr(environment, tool.name)(**arguments)
        returns.append(environment.get_reward())
        replies.append(list(environment.replies))
    return returns, replies


def in_process(env_id: str, rows: list[dict], replies: list[list[str]]) -> list[float]:
    env_family = family(env_id)
    access = tool_set(env_id).text_access
    returns = []
    for row, played in zip(rows, replies, strict=True):
        env = env_family.make(access=access, actions="text", **env_family.episode_kwargs([row["item_id"]]))
        env.reset(seed=row["seed"], options=env_family.reset_options(row["item_id"]))
        total = 0.0
        for reply in played:
            total += float(env.step(reply)[1])
        returns.append(total)
        env.close()
    return returns


def measure(env_id: str, episodes: int) -> dict:
    env_family = family(env_id)
    rows = episode_rows(env_id, split=env_family.splits[0], n=episodes, seed=0)
    rows = [{**row, "seed": i} for i, row in enumerate(rows)]
    through_factory(env_id, rows[:1])  # warm caches (scenario banks, items) outside the clock
    factory_s, direct_s = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        returns, replies = through_factory(env_id, rows)
        factory_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        direct = in_process(env_id, rows, replies)
        direct_s.append(time.perf_counter() - start)
        if direct != returns:
            raise AssertionError(f"{env_id}: the factory's returns differ from in-process play")
    calls = sum(len(r) for r in replies)
    return {
        "env_id": env_id,
        "episodes": len(rows),
        "steps": calls,
        "factory_episodes_per_s": len(rows) / min(factory_s),
        "in_process_episodes_per_s": len(rows) / min(direct_s),
        "ratio": min(factory_s) / min(direct_s),
        "mean_return": float(np.mean(returns)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    args = parser.parse_args()
    results = [measure(env_id, args.episodes) for env_id in env_ids()]
    table = Table(title="TRL environment_factory vs in-process text play (same episodes, same replies)")
    for column in ("env", "episodes", "steps", "factory ep/s", "in-process ep/s", "factory / in-process"):
        table.add_column(column)
    for r in results:
        table.add_row(
            r["env_id"],
            str(r["episodes"]),
            str(r["steps"]),
            f"{r['factory_episodes_per_s']:.0f}",
            f"{r['in_process_episodes_per_s']:.0f}",
            f"{r['ratio']:.2f}x",
        )
    Console().print(table)
    OUT.mkdir(exist_ok=True)
    write_json_atomic(OUT / "trl_factory.json", {"episodes": args.episodes, "rows": results})


if __name__ == "__main__":
    main()
