"""Every registered env served by ``hear-gym serve`` in its own process, as a user starts it: OpenEnv's
runtime validator passes, the current ``EnvClient`` (``HearGymClient``) plays an episode equal to
the same env in process, two sessions stepping at once in two threads each play their own episode
(what ``SUPPORTS_CONCURRENT_SESSIONS`` declares), and the shipped ``openenv.yaml`` manifests are
the ones the registry generates."""

from __future__ import annotations

import json
import re
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
STARTUP_S = 180  # OpenEnv imports gradio on start: seconds each on a loaded 2-core machine


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
        with open(logs / family(env_id).name, "w") as log:
            processes[env_id] = subprocess.Popen(
                [*command, "--max-concurrent-envs", "2"], stdout=log, stderr=subprocess.STDOUT
            )
    try:
        urls = {}
        deadline = time.monotonic() + STARTUP_S
        for env_id, process in processes.items():
            # uvicorn says where it listens (the port that port 0 chose)
            while not (found := re.search(r"running on (http://127\.0\.0\.1:\d+)", _log(logs, env_id))):
                assert process.poll() is None, f"{env_id}: the server exited: {_log(logs, env_id)}"
                assert time.monotonic() < deadline, f"{env_id}: no server after {STARTUP_S} s"
                time.sleep(0.2)
            urls[env_id] = found.group(1)
        yield urls
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

    report = validate_running_environment(servers[env_id], timeout_s=60)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_plays_over_a_server_process_as_in_process(servers, env_id):
    assert _over_server(servers[env_id], 4) == _in_process(env_id, 4)


@pytest.mark.parametrize("env_id", env_ids())
def test_two_sessions_stepping_at_once_each_play_their_own_episode(servers, env_id):
    with ThreadPoolExecutor(2) as pool:
        played = list(pool.map(lambda seed: _over_server(servers[env_id], seed), (11, 12)))
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
