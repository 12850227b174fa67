"""The rllib backend of ``training.ppo.train``. Always: the settings it refuses, a one-line error naming
the extra where Ray RLlib is missing, and a run folder from before backends existed still reused.
Where Ray RLlib is installed: a tiny local training writes the sb3 backend's curve and checkpoint
format, its checkpoint plays through the runner, its network is SB3's (same masked action
distribution and values on real observations), the same seed repeats the curve, and the CLI
trains with a remote env runner."""

from __future__ import annotations

import json
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from safetensors.torch import load_file  # noqa: E402
from test_ppo import HEAR2ACT  # noqa: E402
from test_ppo import TINY as TINY_SB3  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from agents.ppo import WEIGHTS_FILE, PPOAgent, read_config  # noqa: E402
from hear_gym.cli.app import app  # noqa: E402
from training.ppo.curve import CURVE_FILE  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

TINY = {**TINY_SB3, "backend": "rllib"}
TINY_CLI = ["--steps", "256", "--n-envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1"]


def _curve(folder):
    return [json.loads(line) for line in (folder / CURVE_FILE).read_text().splitlines()]


def _weights(folder):
    return load_file(str(folder / "checkpoints" / "final" / WEIGHTS_FILE))


# -- without Ray ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"backend": "jax"}, "backend must be one of"),
        ({"backend": "sb3", "env_runners": 2}, "needs backend 'rllib'"),
        ({"env_runners": -1}, "env_runners must be >= 0"),
    ],
)
def test_bad_backend_settings_are_refused(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PPOSettings(out=tmp_path, env_options=HEAR2ACT, **{**TINY, **kwargs})


def test_without_ray_rllib_training_fails_in_one_line_before_writing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # as where it is not installed
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"needs Ray RLlib .*pip install 'hear-gym\[rllib\]'"):
        train(PPOSettings(out=out, env_options=HEAR2ACT, **TINY))
    assert not out.exists()
    args = ["train", "ppo", "--out", str(out), "--option", "feedback=prosody", "--backend", "rllib"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and "pip install 'hear-gym[rllib]'" in result.output
    assert not out.exists()


def test_a_run_saved_before_backends_existed_is_still_reused(tmp_path):
    """Its settings.json lacks ``backend`` and ``env_runners``: it was trained with sb3, in one process."""
    settings = PPOSettings(out=tmp_path, env_options=HEAR2ACT, **{**TINY, "backend": "sb3"})
    saved = {k: v for k, v in settings.to_json().items() if k not in ("backend", "env_runners")}
    (tmp_path / "settings.json").write_text(json.dumps(saved))
    final = {"step": 256, "kind": "eval", "checkpoint": "checkpoints/final", "metrics": {}}
    (tmp_path / CURVE_FILE).write_text(json.dumps(final) + "\n")
    assert train(settings)["reused"]
    with pytest.raises(FileExistsError, match="different"):
        train(PPOSettings(out=tmp_path, env_options=HEAR2ACT, **TINY))


# -- with Ray RLlib ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def local_ray():
    pytest.importorskip("ray.rllib")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def trained(local_ray, tmp_path_factory):
    out = tmp_path_factory.mktemp("rllib") / "run"
    return out, train(PPOSettings(out=out, env_options=HEAR2ACT, **TINY))


def test_curve_and_checkpoint_are_the_sb3_backends(trained):
    out, result = trained
    rows = _curve(out)
    train_rows = [r for r in rows if r["kind"] == "train"]
    assert train_rows and all(
        {"step", "episodes", "return", "1st%", "premature closure%", "invalid share%"} <= set(r)
        for r in train_rows
    )
    final = rows[-1]
    assert final["kind"] == "eval" and final["checkpoint"] == "checkpoints/final"
    assert final["step"] >= 256 and final["metrics"]["1st%"]["n_scenarios"] == 4
    assert set(final["metrics"]) == set(result["metrics"]) and not result["reused"]
    config = read_config(out / "checkpoints" / "final")
    assert config["algorithm"] == "RLlib PPO" and config["step"] == final["step"]
    assert config["env_options"] == HEAR2ACT and config["access"] == "T" and config["net_arch"] == [64, 64]
    assert {"torch", "ray"} <= set(config["versions"]) and config["provenance"]["git_commit"]
    assert json.loads((out / "settings.json").read_text())["backend"] == "rllib"


def test_checkpoint_plays_through_the_runner(trained, tmp_path):
    out, _ = trained
    checkpoint = out / "checkpoints" / "final"
    args = ["eval", "--out", str(tmp_path / "eval"), "--feedback", "prosody", "--option", "turn_cost=0.02"]
    result = CliRunner().invoke(
        app, [*args, "--cell", f"ppo:{checkpoint}@T", "--limit", "4", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    records = (tmp_path / "eval" / "results.jsonl").read_text().splitlines()
    assert len(records) == 4 and all(json.loads(r)["agent"] == f"ppo:{checkpoint}" for r in records)


def _real_observations(n_episodes: int = 3) -> list[dict[str, np.ndarray]]:
    env = gym.make("hear_gym/Hear2Act-v0", access="T", observation="features", split="train", **HEAR2ACT)
    rng = np.random.default_rng(0)
    observations = []
    for seed in range(n_episodes):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            observations.append(obs)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    env.close()
    return observations


def _assert_the_module_plays_as_the_agent(folder, flat_env, observations) -> None:
    """The checkpoint loads strictly into both networks, which then give the same masked action
    distribution and values on ``observations``, the rllib one through ``flat_env``."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.ppo import standardized
    from training.ppo.rllib import MaskedActorCritic

    sb3 = PPOAgent.from_checkpoint(folder)
    module = RLModuleSpec(
        module_class=MaskedActorCritic,
        observation_space=flat_env.observation_space,
        action_space=flat_env.action_space,
        model_config={"net_arch": [64, 64]},
    ).build()
    module.load_state_dict(load_file(str(folder / WEIGHTS_FILE)), strict=True)
    flat = [flat_env.observation(obs) for obs in observations]
    batch = {Columns.OBS: {k: torch.as_tensor(np.stack([f[k] for f in flat])) for k in flat[0]}}
    logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    rllib_probs = torch.softmax(logits.double(), dim=-1).numpy()
    sb3_probs = np.stack([sb3.probabilities(obs) for obs in observations])
    np.testing.assert_allclose(rllib_probs, sb3_probs, atol=1e-6)
    with torch.no_grad():
        rllib_values = module.compute_values(batch).numpy()
        sb3_values = np.array(
            [
                sb3.policy.predict_values(
                    sb3.policy.obs_to_tensor(standardized(o, sb3.normalization))[0]
                ).item()
                for o in observations
            ]
        )
    np.testing.assert_allclose(rllib_values, sb3_values, atol=1e-5)


def test_the_rllib_module_is_the_sb3_policy(trained):
    """Same layer names, shapes, flattening and masking as SB3's policy."""
    from training.ppo.rllib import FlatFeatureEnv

    out, _ = trained
    config = {"env_id": "hear_gym/Hear2Act-v0", "access": "T", "env_options": HEAR2ACT, "normalization": {}}
    observations = _real_observations()
    assert np.any(np.stack([obs["action_mask"] for obs in observations]) == 0)  # masking is exercised
    with FlatFeatureEnv(config) as flat_env:
        _assert_the_module_plays_as_the_agent(out / "checkpoints" / "final", flat_env, observations)


def test_measured_leaves_are_standardized_as_the_checkpoint_says(local_ray, tmp_path):
    """An observation with a measured leaf (Onset's acoustic features) trains standardized by
    ``measured_statistics``; the checkpoint records those statistics, and the agent that
    standardizes by them plays as the rllib module on the env's standardized observations."""
    from training.ppo.envs import measured_statistics
    from training.ppo.rllib import FlatFeatureEnv

    onset = dict(env_id="hear_gym/Onset-v0", access="A", **{**TINY, "total_steps": 128})
    settings = PPOSettings(out=tmp_path / "onset", **onset)
    train(settings)
    folder = settings.out / "checkpoints" / "final"
    recorded = read_config(folder)["observation_normalization"]
    assert recorded == json.loads(json.dumps(measured_statistics(settings)))
    assert set(recorded["leaves"]) == {"acoustic"}
    config = {"env_id": "hear_gym/Onset-v0", "access": "A", "env_options": {}, "normalization": recorded}
    with FlatFeatureEnv(config) as flat_env:
        observations, rng = [], np.random.default_rng(0)
        observation, _ = flat_env.env.reset(seed=0)
        for _ in range(40):
            observations.append(observation)
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            observation, _, terminated, truncated, _ = flat_env.env.step(action)
            if terminated or truncated:
                observation, _ = flat_env.env.reset()
        assert flat_env.observation_space.contains(flat_env.observation(observations[-1]))
        _assert_the_module_plays_as_the_agent(folder, flat_env, observations)
    unnormalized = PPOSettings(out=tmp_path / "raw", normalize_observation=False, **onset)
    train(unnormalized)
    assert read_config(unnormalized.out / "checkpoints" / "final")["observation_normalization"] == {}


def test_same_seed_gives_the_same_curve_and_weights(trained, tmp_path):
    first, _ = trained
    again = tmp_path / "again"
    train(PPOSettings(out=again, env_options=HEAR2ACT, **TINY))
    assert _curve(again) == _curve(first)
    a, b = _weights(first), _weights(again)
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    other = tmp_path / "other_seed"
    train(PPOSettings(out=other, env_options=HEAR2ACT, **{**TINY, "seed": 1}))
    c = _weights(other)
    assert not all(np.array_equal(a[k].numpy(), c[k].numpy()) for k in a)


def test_cli_trains_with_remote_env_runners_and_wandb_offline(local_ray, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    out = tmp_path / "cli"
    args = ["train", "ppo", "--out", str(out), "--option", "feedback=prosody", "--option", "turn_cost=0.02"]
    rllib = ["--backend", "rllib", "--env-runners", "1", "--eval-limit", "4", "--no-progress"]
    result = CliRunner().invoke(app, [*args, *TINY_CLI, *rllib])
    assert result.exit_code == 0, result.output
    rows = _curve(out)
    assert any(r["kind"] == "train" and r["episodes"] > 0 for r in rows)
    assert rows[-1]["checkpoint"] == "checkpoints/final"
    assert json.loads((out / "settings.json").read_text())["env_runners"] == 1
    assert list((out / "wandb").glob("offline-run-*"))
