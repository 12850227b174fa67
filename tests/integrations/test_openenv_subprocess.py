"""Every registered env served by ``hear-gym serve`` in its own process, as a user starts it: OpenEnv's
runtime validator passes, the current ``EnvClient`` (``HearGymClient``) plays an episode equal to
the same env in process, two sessions stepping at once in two threads each play their own episode
(what ``SUPPORTS_CONCURRENT_SESSIONS`` declares), and the shipped ``openenv.yaml`` manifests are
the ones the registry generates. Onset's server runs two worker processes behind its one address:
both serve sessions, and a worker killed mid-episode loses its sessions with ``SessionLost`` while
the other's go on and the parent starts a replacement."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym
import numpy as np
import openenv_import
import pytest

from hear_gym.core.registry import env_ids, family

openenv_integration = openenv_import.openenv_integration()
HearGymClient = openenv_integration.HearGymClient

from hear_gym.integrations.openenv import manifest as manifests  # noqa: E402

SERVE = Path(sys.executable).with_name("hear-gym")
STARTUP_S = 180  # importing OpenEnv and the env: seconds each on a loaded 2-core machine
WORKERS_ENV = "hear_gym/Onset-v0"  # served by two worker processes behind one address


def _access(env_id: str) -> str:
    conditions = family(env_id).access_conditions
    return "A+T" if "A+T" in conditions else conditions[0]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """One ``hear-gym serve`` process per env id, started at once; yields {env id: base URL}."""
    logs = tmp_path_factory.mktemp("serve")
    processes = {}
    for env_id in env_ids():
        command = [str(SERVE), "serve", "--env", env_id, "--access", _access(env_id), "--port", "0"]
        # per worker: a connection goes to whichever worker accepts it, full or not
        command += (
            ["--workers", "2", "--max-concurrent-envs", "8"]
            if env_id == WORKERS_ENV
            else ["--max-concurrent-envs", "2"]
        )
        with open(logs / family(env_id).name, "w") as log:
            processes[env_id] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        urls = {}
        deadline = time.monotonic() + STARTUP_S
        for env_id, process in processes.items():
            # uvicorn says where it listens (the port that port 0 chose), then that each worker
            # has started (with workers, the address is bound before they start)
            workers = 2 if env_id == WORKERS_ENV else 1
            while not (
                (found := re.search(r"running on (http://127\.0\.0\.1:\d+)", _log(logs, env_id)))
                and _log(logs, env_id).count("Application startup complete") >= workers
            ):
                assert process.poll() is None, f"{env_id}: the server exited: {_log(logs, env_id)}"
                assert time.monotonic() < deadline, f"{env_id}: no server after {STARTUP_S} s"
                time.sleep(0.2)
            urls[env_id] = found.group(1)
        yield {env_id: (url, processes[env_id]) for env_id, url in urls.items()}
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            process.wait(timeout=30)


def _log(folder: Path, env_id: str) -> str:
    return (folder / family(env_id).name).read_text()


def _legal(observation, rng) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def _in_process(env_id: str, seed: int) -> tuple[list[float], dict]:
    env = gym.make(env_id, access=_access(env_id))
    observation, _ = env.reset(seed=seed)
    rng, rewards, done = np.random.default_rng(seed), [], False
    while not done:
        observation, reward, terminated, truncated, info = env.step(_legal(observation, rng))
        rewards.append(float(reward))
        done = terminated or truncated
    return rewards, json.loads(json.dumps(info["episode"], default=str))


def _over_server(url: str, seed: int) -> tuple[list[float], dict]:
    with HearGymClient(url) as client:
        result = client.reset(seed=seed)
        rng, rewards = np.random.default_rng(seed), []
        while not result.done:
            result = client.step(_legal(client.decode(result.observation), rng))
            rewards.append(result.reward)
        return rewards, result.observation.metadata["info"]["episode"]


@pytest.mark.parametrize("env_id", env_ids())
def test_openenvs_runtime_validator_passes(servers, env_id):
    from openenv.cli._validation import validate_running_environment

    report = validate_running_environment(servers[env_id][0], timeout_s=60)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_plays_over_a_server_process_as_in_process(servers, env_id):
    assert _over_server(servers[env_id][0], 4) == _in_process(env_id, 4)


@pytest.mark.parametrize("env_id", env_ids())
def test_two_sessions_stepping_at_once_each_play_their_own_episode(servers, env_id):
    with ThreadPoolExecutor(2) as pool:
        played = list(pool.map(lambda seed: _over_server(servers[env_id][0], seed), (11, 12)))
    assert played == [_in_process(env_id, 11), _in_process(env_id, 12)]
    assert played[0] != played[1]  # the seeds give different episodes: a swap would show


def test_the_shipped_manifests_are_the_registrys(tmp_path):
    from uvicorn.importer import import_from_string

    written = manifests.write_manifests(tmp_path)
    assert len(written) == len(env_ids())
    for env_id, path in zip(env_ids(), written, strict=True):
        shipped = manifests.manifest_path(env_id)
        assert shipped.read_text() == path.read_text(), f"regenerate: python -m {manifests.__name__}"
        data = manifests.yaml.safe_load(shipped.read_text())
        assert data["env_id"] == env_id and data["supports_concurrent_sessions"] is True
        app = import_from_string(data["app"])
        assert any(getattr(route, "path", None) == "/ws" for route in app.routes)


def _session_on_another_worker(url: str, worker: int | None) -> tuple[HearGymClient, list[HearGymClient]]:
    """A connected, reset session on a worker other than ``worker`` (any when None), and the
    sessions opened on the way (the kernel gives each connection to either worker)."""
    opened = []
    for seed in range(16):
        client = HearGymClient(url).sync()
        client.reset(seed=seed)
        if client.state().worker_pid != worker:
            return client, opened
        opened.append(client)
    raise AssertionError(f"16 sessions all on worker {worker}")


def _workers(server: subprocess.Popen) -> set[int]:
    """The live worker processes of ``server`` (not the one being reaped, nor its other helpers)."""
    import psutil

    workers = set()
    for child in psutil.Process(server.pid).children():
        try:
            if "multiprocessing.spawn" in " ".join(child.cmdline()):
                workers.add(child.pid)
        except psutil.Error:  # gone, or a zombie until its parent reaps it
            pass
    return workers


def test_two_workers_serve_sessions_behind_one_address(servers):
    url, server = servers[WORKERS_ENV]
    first, opened = _session_on_another_worker(url, None)
    second, more = _session_on_another_worker(url, first.state().worker_pid)
    try:
        pids = {first.state().worker_pid, second.state().worker_pid}
        assert len(pids) == 2 and pids <= _workers(server)
        for seed, client in ((21, first), (22, second)):
            result = client.reset(seed=seed)
            rng, rewards = np.random.default_rng(seed), []
            while not result.done:
                result = client.step(_legal(client.decode(result.observation), rng))
                rewards.append(result.reward)
            assert (rewards, result.observation.metadata["info"]["episode"]) == _in_process(WORKERS_ENV, seed)
    finally:
        for client in [first, second, *opened, *more]:
            client.close()


def test_a_killed_worker_loses_its_sessions_with_a_clear_error_and_is_replaced(servers):
    url, server = servers[WORKERS_ENV]
    doomed, opened = _session_on_another_worker(url, None)
    killed = doomed.state().worker_pid
    survivor, more = _session_on_another_worker(url, killed)
    try:
        first = survivor.reset(seed=31)
        os.kill(killed, signal.SIGKILL)
        with pytest.raises(
            openenv_integration.SessionLost, match="stopped or restarted.*reset\\(\\) opens a new"
        ):
            for _ in range(100):  # until the client sees the connection gone
                doomed.step(0)
                time.sleep(0.05)
        result, rng, rewards = first, np.random.default_rng(31), []
        while not result.done:  # the other worker's session plays on, as in process
            result = survivor.step(_legal(survivor.decode(result.observation), rng))
            rewards.append(result.reward)
        assert (rewards, result.observation.metadata["info"]["episode"]) == _in_process(WORKERS_ENV, 31)
        doomed.reset(seed=32)  # a new session, on a live worker
        assert doomed.state().worker_pid != killed
        deadline = time.monotonic() + STARTUP_S
        while not (len(workers := _workers(server)) == 2 and killed not in workers):
            assert time.monotonic() < deadline, f"no worker replaced {killed}: {workers}"
            time.sleep(0.5)
    finally:
        for client in [doomed, survivor, *opened, *more]:
            client.close()
