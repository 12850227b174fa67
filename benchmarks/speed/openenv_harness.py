"""The pieces of the OpenEnv serving study (``openenv_throughput``): ``hear-gym serve`` and an echo
server in their own processes, sessions on chosen workers, episodes played in process and over
the server with every round trip timed, and the CPU each side spent."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import httpx
import numpy as np
import psutil
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from websockets.asyncio.client import connect

from hear_gym.integrations.openenv import HearGymClient

ROOT = Path(__file__).resolve().parents[2]
STARTUP_S = 300  # a loaded 2-core machine takes tens of seconds to import a server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(command: list[str], port: int) -> tuple[subprocess.Popen, str]:
    """``command`` in its own process, once ``/health`` answers on ``port``."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=1, trust_env=False).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{' '.join(command)} did not come up")


def start_server(env_id: str, access: str, workers: int, sessions: int, memory_limit_mb: float | None = None):
    port = free_port()
    command = [str(Path(sys.executable).with_name("hear-gym")), "serve", "--env", env_id, "--access", access]
    command += ["--port", str(port), "--workers", str(workers), "--max-concurrent-envs", str(sessions)]
    if memory_limit_mb is not None:
        command += ["--memory-limit", str(memory_limit_mb)]
    return start(command, port)


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=60)


def worker_pids(server: subprocess.Popen) -> list[int]:
    """The processes that hold sessions: the server itself, or its worker processes."""
    children = psutil.Process(server.pid).children()
    workers = [child.pid for child in children if "multiprocessing.spawn" in " ".join(child.cmdline())]
    return workers or [server.pid]


def cpu_seconds(pids: list[int]) -> float:
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)


def resident_mb(pids: list[int]) -> float:
    return sum(psutil.Process(pid).memory_info().rss for pid in pids) / 2**20


# The loopback floor: the same transport (uvicorn with hear-gym serve's WebSocket settings, the
# websockets client EnvClient uses) answering a small request with a message of the size asked.
echo_app = FastAPI()


@echo_app.get("/health")
async def _health() -> dict:
    return {"status": "healthy"}


@echo_app.websocket("/echo")
async def _echo(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            size = int(await websocket.receive_text())
            await websocket.send_text("x" * size)
    except WebSocketDisconnect:
        pass


def serve_echo(port: int) -> None:
    import uvicorn

    from hear_gym.integrations.openenv.process import _uvicorn_config

    uvicorn.Server(_uvicorn_config(echo_app, "127.0.0.1", port, "warning")).run()


def start_echo() -> tuple[subprocess.Popen, str]:
    port = free_port()
    code = f"from benchmarks.speed.openenv_harness import serve_echo; serve_echo({port})"
    return start([sys.executable, "-c", code], port)


async def echo_round_trips(url: str, size: int, count: int) -> list[float]:
    ws_url = url.replace("http://", "ws://") + "/echo"
    async with connect(ws_url, proxy=None, max_size=None, compression=None) as ws:
        times = []
        for _ in range(count):
            start_s = time.perf_counter()
            await ws.send(str(size))
            await ws.recv()
            times.append(time.perf_counter() - start_s)
    return times


def legal(observation, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def in_process(env: gym.Env, seeds, steps_s: list[float] | None = None) -> int:
    """Plays ``seeds`` (random legal actions seeded per episode); returns the steps, timing each."""
    steps = 0
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        rng, done = np.random.default_rng(seed), False
        while not done:
            action = legal(observation, rng)
            start_s = time.perf_counter()
            observation, _, terminated, truncated, _ = env.step(action)
            if steps_s is not None:
                steps_s.append(time.perf_counter() - start_s)
            done, steps = terminated or truncated, steps + 1
    return steps


async def play(
    client: HearGymClient, seeds, round_trips_s: list[float] | None = None, sizes: list[int] | None = None
) -> int:
    """``seeds`` over one session, each step's round trip timed; ``sizes``: each answer's bytes."""
    steps = 0
    for seed in seeds:
        result = await client.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not result.done:
            action = legal(client.decode(result.observation), rng)
            start_s = time.perf_counter()
            result = await client.step(action)
            if round_trips_s is not None:
                round_trips_s.append(time.perf_counter() - start_s)
            if sizes is not None:
                sizes.append(answer_bytes(result.observation))
            steps += 1
    return steps


def answer_bytes(observation) -> int:
    """What one answer carried: its JSON (audio left out) plus its audio bytes."""
    audio = {name: value for name, value in observation.__dict__.items() if isinstance(value, bytes)}
    text = observation.model_dump_json(exclude=set(audio))
    return len(text) + sum(len(value) for value in audio.values())


async def play_concurrently(clients: list[HearGymClient], seeds) -> int:
    shares = [seeds[k :: len(clients)] for k in range(len(clients))]
    done = await asyncio.gather(*(play(client, share) for client, share in zip(clients, shares, strict=True)))
    return sum(done)


async def sessions_by_worker(
    url: str, wanted: int, workers: int, tries: int = 64, **client_kwargs
) -> dict[int, list[HearGymClient]]:
    """``wanted`` connected sessions on each of ``workers`` workers (the kernel deals connections to
    workers; the extra ones opened on the way are closed)."""
    by_worker: dict[int, list[HearGymClient]] = {}
    for _ in range(tries):
        if len(by_worker) == workers and all(len(held) >= wanted for held in by_worker.values()):
            break
        client = HearGymClient(url, message_timeout_s=600, **client_kwargs)
        await client.connect()
        await client.reset(seed=0)
        held = by_worker.setdefault((await client.state()).worker_pid, [])
        if len(held) < wanted:
            held.append(client)
        else:
            await client.close()
    else:
        raise RuntimeError(f"{tries} connections did not give {wanted} sessions on each of {workers} workers")
    return by_worker


def percentile_us(times_s: list[float], q: float) -> float:
    return float(np.percentile(times_s, q) * 1e6)
