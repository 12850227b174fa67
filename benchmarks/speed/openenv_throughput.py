"""Episodes per second over a ``hear-gym serve`` OpenEnv server against the same env in process,
and with 4 concurrent sessions against 1, as ratios measured in one run.

Prints a table and writes benchmarks/out/openenv_throughput.json. Rows: every registered env id
(from the registry) under its audio-and-text condition (``A+T``, audio as base64 PCM16) and its
text-only one (``T``) where the family has them; dict observation, discrete actions.

Each row plays the same ``--episodes`` episodes (seeds 0..E-1, random legal actions from a
generator seeded per episode) three ways: in process (``gym.make``, one env); over the server
with one session; over the server with 4 concurrent sessions (asyncio clients in this process,
each playing a quarter of the seeds). The server is ``hear-gym serve`` in its own process (so it
shares no interpreter lock with the clients), started once per row; the sessions are opened once
and kept, as a trainer keeps its envs, so the clock holds episodes only (resets included, not
the building of a session's env). Every way plays its episodes once untimed first (imports,
render caches), then the three ways alternate for ``--repeats`` passes and each keeps its best, so
drifts in machine load hit all three.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import httpx
import numpy as np
from rich.console import Console
from rich.table import Table

from hear_gym.core import registry
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.integrations.openenv import HearGymClient

OUT = Path(__file__).resolve().parents[1] / "out"
SESSIONS = 4


def _legal(observation, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def in_process(env: gym.Env, seeds: range) -> int:
    steps = 0
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        rng, done = np.random.default_rng(seed), False
        while not done:
            observation, _, terminated, truncated, _ = env.step(_legal(observation, rng))
            done, steps = terminated or truncated, steps + 1
    return steps


async def _play(client: HearGymClient, seeds) -> int:
    steps = 0
    for seed in seeds:
        result = await client.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not result.done:
            result = await client.step(_legal(client.decode(result.observation), rng))
            steps += 1
    return steps


async def over_server(clients: list[HearGymClient], seeds: range) -> int:
    """``seeds`` shared out among ``clients`` (one session each), played concurrently."""
    shares = [seeds[k :: len(clients)] for k in range(len(clients))]
    return sum(
        await asyncio.gather(*(_play(client, share) for client, share in zip(clients, shares, strict=True)))
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env_id: str, access: str) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    command = [str(Path(sys.executable).with_name("hear-gym")), "serve", "--env", env_id, "--access", access]
    command += ["--port", str(port), "--max-concurrent-envs", str(SESSIONS + 1), "--audio", "pcm16"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=1, trust_env=False).status_code == 200:
                return server, url
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"hear-gym serve {env_id} ({access}) did not come up")


async def measure_row(env_id: str, access: str, episodes: int, repeats: int) -> dict:
    seeds = range(episodes)
    env = gym.make(env_id, access=access)
    server, url = start_server(env_id, access)
    one = [HearGymClient(url, message_timeout_s=300)]
    many = [HearGymClient(url, message_timeout_s=300) for _ in range(SESSIONS)]
    try:
        for client in one + many:
            await client.connect()
        # warm-up, untimed: every way plays its episodes once (imports, each env's render caches)
        in_process(env, seeds)
        await over_server(one, seeds)
        await over_server(many, seeds)
        best = {"in_process": float("inf"), "server_1": float("inf"), f"server_{SESSIONS}": float("inf")}
        steps = {}
        for _ in range(repeats):
            for way in best:
                start = time.perf_counter()
                if way == "in_process":
                    steps[way] = in_process(env, seeds)
                else:
                    steps[way] = await over_server(one if way == "server_1" else many, seeds)
                best[way] = min(best[way], time.perf_counter() - start)
    finally:
        for client in one + many:
            await client.close()
        server.terminate()
        server.wait(timeout=30)
    assert len(set(steps.values())) == 1, f"the three ways played different episodes: {steps}"
    rate = {way: episodes / seconds for way, seconds in best.items()}
    return {
        "env_id": env_id,
        "access": access,
        "episodes": episodes,
        "repeats": repeats,
        "load_average_1min_after": os.getloadavg()[0],
        "steps": steps["in_process"],
        "episodes_per_s": rate,
        "server_vs_in_process": rate["server_1"] / rate["in_process"],
        f"sessions_{SESSIONS}_vs_1": rate[f"server_{SESSIONS}"] / rate["server_1"],
    }


def main(episodes: int, repeats: int) -> list[dict]:
    registry.register_envs()
    rows = [
        asyncio.run(measure_row(env_id, access, episodes, repeats))
        for env_id in registry.env_ids()
        for access in ("A+T", "T")
        if access in registry.family(env_id).access_conditions
    ]
    table = Table(
        "env",
        "access",
        "steps",
        "in process (ep/s)",
        "server, 1 session (ep/s)",
        f"server, {SESSIONS} sessions (ep/s)",
        "server / in process",
        f"{SESSIONS} sessions / 1",
        title=f"OpenEnv server throughput ({episodes} episodes, best of {repeats} interleaved passes)",
    )
    for row in rows:
        rate = row["episodes_per_s"]
        table.add_row(
            row["env_id"].removeprefix("hear_gym/"),
            row["access"],
            str(row["steps"]),
            f"{rate['in_process']:.1f}",
            f"{rate['server_1']:.1f}",
            f"{rate[f'server_{SESSIONS}']:.1f}",
            f"{row['server_vs_in_process']:.3f}",
            f"{row[f'sessions_{SESSIONS}_vs_1']:.2f}",
        )
    Console().print(table)
    OUT.mkdir(exist_ok=True)
    write_json_atomic(OUT / "openenv_throughput.json", rows)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40, help="Episodes per pass (a multiple of 4).")
    parser.add_argument("--repeats", type=int, default=3, help="Timed passes of each way (best kept).")
    arguments = parser.parse_args()
    main(arguments.episodes, arguments.repeats)
