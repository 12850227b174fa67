"""A damaged PPO checkpoint played through ``hear-gym eval --cell ppo:FOLDER@ACCESS`` is refused
with one line naming the file and what is wrong, never a traceback."""

from __future__ import annotations

import json
import shutil

import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("sb3_contrib")
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy  # noqa: E402

from agents.ppo import CONFIG_FILE, WEIGHTS_FILE, save_policy  # noqa: E402
from hear_gym.cli.app import app  # noqa: E402

ENV_ID = "hear_gym/VoiceGate-v0"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """An untrained policy saved as a checkpoint: loading needs no training."""
    env = gym.make(ENV_ID, access="T", observation="features")
    policy = MaskableMultiInputActorCriticPolicy(
        env.observation_space, env.action_space, lambda _: 0.0, net_arch=[8]
    )
    meta = {"env_id": ENV_ID, "access": "T", "env_options": {}, "net_arch": [8], "policy": "mlp"}
    folder = tmp_path_factory.mktemp("ppo") / "checkpoint"
    return save_policy(policy.state_dict(), env.observation_space, env.action_space.n, folder, meta)


def _evaluate(folder, out):
    cell = f"ppo:{folder}@T"
    args = ["eval", "--env", ENV_ID, "--out", str(out), "--cell", cell, "--limit", "1", "--no-progress"]
    return CliRunner().invoke(app, args, catch_exceptions=False)


def _weights(data: bytes):
    def damage(folder):
        path = folder / WEIGHTS_FILE
        path.write_bytes(data if isinstance(data, bytes) else data(path.read_bytes()))

    return damage


def _config(edit):
    def damage(folder):
        path = folder / CONFIG_FILE
        config = json.loads(path.read_text())
        edit(config)
        path.write_text(json.dumps(config))

    return damage


def _non_numeric_statistics(config):
    leaf, shape = next(iter(config["observation_shapes"].items()))
    stats = {"mean": ["zero"] * shape[0], "var": [1.0] * shape[0]}
    config["observation_normalization"] = {"clip": 10.0, "epsilon": 1e-8, "leaves": {leaf: stats}}


DAMAGE = {
    "truncated weights": (_weights(lambda data: data[: len(data) // 2]), WEIGHTS_FILE),
    "empty weights": (_weights(b""), WEIGHTS_FILE),
    "random weights": (_weights(np.random.default_rng(0).bytes(4096)), WEIGHTS_FILE),
    "net_arch a string": (_config(lambda c: c.update(net_arch="64,64")), "net_arch"),
    "no env_id": (_config(lambda c: c.pop("env_id")), "env_id"),
    "a foreign env_id": (_config(lambda c: c.update(env_id="CartPole-v1")), "CartPole-v1"),
    "an unknown env option": (
        _config(lambda c: c.update(env_options={"no_such_option": 1})),
        "no_such_option",
    ),
    "non-numeric statistics": (_config(_non_numeric_statistics), "mean"),
}


def test_the_undamaged_checkpoint_plays(checkpoint, tmp_path):
    result = _evaluate(checkpoint, tmp_path / "run")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_checkpoint_is_one_line(checkpoint, tmp_path, damage):
    damaged = tmp_path / "damaged"
    shutil.copytree(checkpoint, damaged)
    corrupt, what = DAMAGE[damage]
    corrupt(damaged)
    result = _evaluate(damaged, tmp_path / "run")
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert len(lines) == 1 and str(damaged) in lines[0] and what in lines[0], result.output
    assert not (tmp_path / "run").exists()  # a refused run leaves nothing behind
