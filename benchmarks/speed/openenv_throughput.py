"""What serving an env over ``hear-gym serve`` costs against playing it in process, what a second
server process buys, and how many sessions one process holds with bounded memory; ratios
measured in one run.

Prints two tables and writes benchmarks/out/openenv_throughput.json. Rows: every registered env id
(from the registry) under its audio-and-text condition (``A+T``) and its text-only one (``T``);
dict observation, discrete actions, PCM16 audio.

Each row starts ``hear-gym serve --workers 2`` in its own processes and opens sessions on chosen
workers (each session reports the worker holding it). The same ``--episodes`` episodes (seeds
0..E-1, random legal actions seeded per episode) are played: in process (one env, every step
timed); over one session with audio as binary frames and over one with base64 JSON (every round
trip timed, client call to decoded answer); by ``--concurrent`` sessions all on one worker
("1 process") and split evenly over both ("2 processes"), CPU-seconds of the server and of the
client counted per episode. The loopback floor is an echo server on the same transport (uvicorn
with the server's WebSocket settings, the websockets client EnvClient uses) answering a one-line
request with a message the size of the row's median answer. Every way plays its episodes once
untimed first (imports, render caches); the timed passes alternate ``--repeats`` times, rates keep
each way's best pass and latencies pool every pass.

The session part opens ``--sessions`` sessions on one server process of ``--sessions-env`` (T and
A+T), each reset and stepped once, in batches, and records the process's resident memory as they
come (``--memory-limit`` set on the server, so a session beyond it would be refused).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import benchmarks.speed.openenv_harness as harness
from hear_gym.core import registry
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.integrations.openenv import HearGymClient

OUT = Path(__file__).resolve().parents[1] / "out"
TARGET_STEPS = 5  # a text round trip's target: 5 in-process steps plus the loopback floor
ECHOES = 400
MILESTONES = (64, 128, 256, 512, 1024)


async def measure_row(
    env_id: str, access: str, episodes: int, repeats: int, concurrent: int, echo_url: str
) -> dict:
    seeds = range(episodes)
    env = gym.make(env_id, access=access)
    server, url = harness.start_server(env_id, access, workers=2, sessions=2 * concurrent + 2)
    clients: list[HearGymClient] = []
    try:
        by_worker = await harness.sessions_by_worker(url, concurrent, workers=2)
        first, second = by_worker.values()
        clients += first + second
        single = first[0]
        base64_client = HearGymClient(url, binary_frames=False, message_timeout_s=600)
        await base64_client.connect()
        clients.append(base64_client)
        half = concurrent // 2
        ways = {
            "in_process": lambda record: harness.in_process(env, seeds, record),
            "binary_frames": lambda record: harness.play(single, seeds, record),
            "base64": lambda record: harness.play(base64_client, seeds, record),
            "1_process": lambda record: harness.play_concurrently(first[:concurrent], seeds),
            "2_processes": lambda record: harness.play_concurrently(first[:half] + second[:half], seeds),
        }
        for run in ways.values():  # warm-up, untimed: both workers' caches, every client's imports
            if asyncio.iscoroutine(steps := run(None)):
                await steps
        best = dict.fromkeys(ways, float("inf"))
        latencies: dict[str, list[float]] = {way: [] for way in ("in_process", "binary_frames", "base64")}
        steps, cpu = {}, {"server_1": 0.0, "client_1": 0.0}
        workers = harness.worker_pids(server)
        for _ in range(repeats):
            for way, run in ways.items():
                server_cpu, client_cpu = harness.cpu_seconds(workers), time.process_time()
                start_s = time.perf_counter()
                played = run(latencies.get(way))
                steps[way] = await played if asyncio.iscoroutine(played) else played
                best[way] = min(best[way], time.perf_counter() - start_s)
                if way == "1_process":
                    cpu["server_1"] += harness.cpu_seconds(workers) - server_cpu
                    cpu["client_1"] += time.process_time() - client_cpu
        sizes: list[int] = []
        await harness.play(single, seeds[:2], sizes=sizes)
        echo = await harness.echo_round_trips(echo_url, int(np.median(sizes)), ECHOES)
    finally:
        for client in clients:
            await client.close()
        harness.stop(server)
    assert len(set(steps.values())) == 1, f"the ways played different episodes: {steps}"
    rate = {way: episodes / seconds for way, seconds in best.items()}
    step_p50 = harness.percentile_us(latencies["in_process"], 50)
    echo_p50 = harness.percentile_us(echo, 50)
    return {
        "env_id": env_id,
        "access": access,
        "episodes": episodes,
        "repeats": repeats,
        "concurrent": concurrent,
        "steps": steps["in_process"],
        "load_average_1min_after": os.getloadavg()[0],
        "median_answer_bytes": int(np.median(sizes)),
        "latency_us": {
            way: {"p50": harness.percentile_us(times, 50), "p99": harness.percentile_us(times, 99)}
            for way, times in {**latencies, "echo": echo}.items()
        },
        "target_us": TARGET_STEPS * step_p50 + echo_p50,
        "episodes_per_s": rate,
        "two_vs_one_process": rate["2_processes"] / rate["1_process"],
        "cpu_ms_per_episode": {side: 1e3 * seconds / (episodes * repeats) for side, seconds in cpu.items()},
    }


async def hold_sessions(env_id: str, access: str, most: int, memory_limit_mb: float) -> dict:
    server, url = harness.start_server(
        env_id, access, workers=1, sessions=most, memory_limit_mb=memory_limit_mb
    )
    clients: list[HearGymClient] = []
    refused, memory = 0, []
    try:
        (pid,) = harness.worker_pids(server)
        memory.append({"sessions": 0, "resident_mb": harness.resident_mb([pid])})

        async def open_one(seed: int) -> HearGymClient | None:
            client = HearGymClient(url, message_timeout_s=600)
            try:
                result = await client.reset(seed=seed)
                await client.step(
                    harness.legal(client.decode(result.observation), np.random.default_rng(seed))
                )
            except RuntimeError as exc:
                await client.close()
                if "CAPACITY_REACHED" not in str(exc):
                    raise
                return None
            return client

        for start in range(0, most, 32):
            opened = await asyncio.gather(*(open_one(seed) for seed in range(start, min(start + 32, most))))
            clients += [client for client in opened if client is not None]
            refused += opened.count(None)
            if len(clients) in MILESTONES or start + 32 >= most:
                memory.append({"sessions": len(clients), "resident_mb": harness.resident_mb([pid])})
        # every held session answers once more, all at once
        answers = await asyncio.gather(*(client.state() for client in clients), return_exceptions=True)
        answered = sum(not isinstance(answer, BaseException) for answer in answers)
    finally:
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
        harness.stop(server)
    base = memory[0]["resident_mb"]
    return {
        "env_id": env_id,
        "access": access,
        "asked": most,
        "held": len(clients),
        "answered": answered,
        "refused": refused,
        "memory_limit_mb": memory_limit_mb,
        "resident_mb": memory,
        "mb_per_session": (memory[-1]["resident_mb"] - base) / max(len(clients), 1),
    }


def _rows_table(rows: list[dict], episodes: int, repeats: int) -> Table:
    table = Table(
        "env",
        "access",
        "in-process step p50/p99 (us)",
        "binary frames rt p50/p99 (us)",
        "base64 rt p50/p99 (us)",
        "echo p50 (us)",
        "target (us)",
        "ep/s in process",
        "ep/s 1 process",
        "ep/s 2 processes",
        "2 / 1",
        "server / client CPU (ms/ep)",
        title=f"OpenEnv serving ({episodes} episodes, best of {repeats} interleaved passes)",
    )
    for row in rows:
        lat, rate, cpu = row["latency_us"], row["episodes_per_s"], row["cpu_ms_per_episode"]
        table.add_row(
            row["env_id"].removeprefix("hear_gym/"),
            row["access"],
            *(
                f"{lat[way]['p50']:.0f} / {lat[way]['p99']:.0f}"
                for way in ("in_process", "binary_frames", "base64")
            ),
            f"{lat['echo']['p50']:.0f}",
            f"{row['target_us']:.0f}",
            *(f"{rate[way]:.1f}" for way in ("in_process", "1_process", "2_processes")),
            f"{row['two_vs_one_process']:.2f}",
            f"{cpu['server_1']:.1f} / {cpu['client_1']:.1f}",
        )
    return table


def _sessions_table(held: list[dict]) -> Table:
    table = Table(
        "env", "access", "held / asked", "answered", "refused", "resident MiB by sessions", "MiB per session"
    )
    for row in held:
        trace = ", ".join(f"{m['sessions']}: {m['resident_mb']:.0f}" for m in row["resident_mb"])
        table.add_row(
            row["env_id"].removeprefix("hear_gym/"),
            row["access"],
            f"{row['held']} / {row['asked']}",
            str(row["answered"]),
            str(row["refused"]),
            trace,
            f"{row['mb_per_session']:.2f}",
        )
    return table


async def _run(arguments: argparse.Namespace) -> dict:
    registry.register_envs()
    echo, echo_url = harness.start_echo()
    try:
        rows = [
            await measure_row(
                env_id, access, arguments.episodes, arguments.repeats, arguments.concurrent, echo_url
            )
            for env_id in (arguments.env or registry.env_ids())
            for access in ("A+T", "T")
            if access in registry.family(env_id).access_conditions
        ]
    finally:
        harness.stop(echo)
    held = [
        await hold_sessions(arguments.sessions_env, access, arguments.sessions, arguments.memory_limit)
        for access in ("T", "A+T")
        if arguments.sessions > 0
    ]
    return {"rows": rows, "sessions": held}


def main(
    episodes: int = 16,
    repeats: int = 3,
    concurrent: int = 4,
    sessions: int = 512,
    sessions_env: str = "hear_gym/Onset-v0",
    memory_limit: float = 4096,
    env: list[str] | None = None,
) -> dict:
    arguments = argparse.Namespace(
        episodes=episodes,
        repeats=repeats,
        concurrent=concurrent,
        sessions=sessions,
        sessions_env=sessions_env,
        memory_limit=memory_limit,
        env=env,
    )
    results = asyncio.run(_run(arguments))
    console = Console(width=220)
    if results["rows"]:
        console.print(_rows_table(results["rows"], episodes, repeats))
    if results["sessions"]:
        console.print(_sessions_table(results["sessions"]))
    OUT.mkdir(exist_ok=True)
    write_json_atomic(OUT / "openenv_throughput.json", results)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--episodes", type=int, default=16, help="Episodes per pass (a multiple of --concurrent)."
    )
    parser.add_argument("--repeats", type=int, default=3, help="Timed passes of each way (best kept).")
    parser.add_argument("--concurrent", type=int, default=4, help="Sessions playing at once (even).")
    parser.add_argument("--sessions", type=int, default=512, help="Sessions to hold at once (0: skip).")
    parser.add_argument(
        "--sessions-env", default="hear_gym/Onset-v0", help="The env whose sessions are held."
    )
    parser.add_argument("--memory-limit", type=float, default=4096, help="MiB the holding server may use.")
    parser.add_argument("--env", action="append", help="Measure only this env id (repeatable).")
    main(**vars(parser.parse_args()))
