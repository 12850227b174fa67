"""PPO training (training.ppo.train), its checkpoints (agents.ppo) and the CLI around them, on runs
short enough for CI: same seed -> same curve and weights, checkpoints that load without pickle
and play through the runner, clear errors for bad settings and damaged checkpoints."""

from __future__ import annotations

import json
import tempfile

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from safetensors.torch import load_file  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from agents.ppo import CONFIG_FILE, WEIGHTS_FILE, GreedyPPOAgent, PPOAgent, read_config  # noqa: E402
from hear_gym.cli.app import app  # noqa: E402
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for  # noqa: E402
from training.ppo.curve import CURVE_FILE  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

TINY = dict(
    total_steps=256,
    n_envs=2,
    n_steps=64,
    batch_size=64,
    n_epochs=1,
    eval_every=0,
    eval_limit=4,
    wandb_project=None,
    progress=False,
)
HEAR2ACT = {"feedback": "prosody", "turn_cost": 0.02}


def _curve(folder):
    return [json.loads(line) for line in (folder / CURVE_FILE).read_text().splitlines()]


def _weights(folder):
    return load_file(str(folder / "checkpoints" / "final" / WEIGHTS_FILE))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo") / "run"
    result = train(PPOSettings(out=out, env_options=HEAR2ACT, **TINY))
    return out, result


def test_same_seed_gives_the_same_curve_and_weights(trained, tmp_path, monkeypatch):
    first, _ = trained
    again = tmp_path / "again"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    train(PPOSettings(out=again, env_options=HEAR2ACT, **TINY))
    assert not list(scratch.glob("SB3-*"))  # SB3's default logger would leave a folder per run
    assert _curve(again) == _curve(first)
    a, b = _weights(first), _weights(again)
    assert a.keys() == b.keys() and all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    other = tmp_path / "other_seed"
    train(PPOSettings(out=other, env_options=HEAR2ACT, **{**TINY, "seed": 1}))
    c = _weights(other)
    assert not all(np.array_equal(a[k].numpy(), c[k].numpy()) for k in a)


def test_curve_logs_training_episodes_and_the_held_out_evaluation(trained):
    out, result = trained
    rows = _curve(out)
    train_rows = [r for r in rows if r["kind"] == "train"]
    assert train_rows and all(
        {"return", "1st%", "premature closure%", "invalid share%"} <= set(r) for r in train_rows
    )
    final = rows[-1]
    assert final["kind"] == "eval" and final["step"] == 256
    assert final["metrics"]["1st%"]["n_scenarios"] == 4
    assert set(final["metrics"]) == set(result["metrics"])
    config = read_config(out / "checkpoints" / "final")
    assert config["env_options"] == HEAR2ACT and config["access"] == "T" and config["step"] == 256
    assert config["provenance"]["generator"] == "hear2act-gen-2" and config["provenance"]["git_commit"]
    assert {"torch", "stable_baselines3", "sb3_contrib"} <= set(config["versions"])


def _play(agent, seed: int) -> list[int]:
    import gymnasium as gym

    env = gym.make("hear_gym/Hear2Act-v0", access="T", observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=seed)
    agent.reset(seed=seed)
    actions = []
    while True:
        action = agent.act(obs)
        assert obs["action_mask"][action] == 1.0
        actions.append(action)
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return actions


def test_checkpoint_agents_replay_the_trained_policy(trained):
    out, _ = trained
    folder = out / "checkpoints" / "final"
    sampled, greedy = PPOAgent.from_checkpoint(folder), GreedyPPOAgent.from_checkpoint(folder)
    assert sampled.required_access == "T" and sampled.observation_format == "features"
    # sampling with the agent's own generator: the same episode seed replays the same actions
    assert _play(sampled, 3) == _play(PPOAgent.from_checkpoint(folder), 3)
    # the greedy agent is SB3's deterministic prediction
    import gymnasium as gym

    env = gym.make("hear_gym/Hear2Act-v0", access="T", observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=3)
    expected, _ = greedy.policy.predict(obs, deterministic=True, action_masks=obs["action_mask"] > 0)
    assert greedy.act(obs) == int(expected)
    probs = sampled.probabilities(obs)
    assert probs.sum() == pytest.approx(1.0) and np.all(probs[obs["action_mask"] == 0] == 0)


def test_damaged_checkpoints_are_refused_clearly(trained, tmp_path):
    out, _ = trained
    source = out / "checkpoints" / "final"
    with pytest.raises(ValueError, match="not a PPO checkpoint"):
        PPOAgent.from_checkpoint(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / WEIGHTS_FILE).write_bytes((source / WEIGHTS_FILE).read_bytes())
    (broken / CONFIG_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        PPOAgent.from_checkpoint(broken)
    config = json.loads((source / CONFIG_FILE).read_text())
    config["observation_shapes"]["dialogue"] = [1]
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match="no longer matches"):
        PPOAgent.from_checkpoint(broken)
    config = json.loads((source / CONFIG_FILE).read_text())
    config["net_arch"] = [8]
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match="do not fit"):
        PPOAgent.from_checkpoint(broken)
    config = json.loads((source / CONFIG_FILE).read_text())
    stats = {"mean": [0.0], "var": [1.0]}
    config["observation_normalization"] = {"clip": 10.0, "epsilon": 1e-8, "leaves": {"dialogue": stats}}
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match="normalization of leaf 'dialogue'"):
        PPOAgent.from_checkpoint(broken)
    config["observation_normalization"] = {}
    config["policy"] = "transformer"
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match="unknown policy 'transformer'"):
        PPOAgent.from_checkpoint(broken)
    del config["policy"]  # checkpoints from before the policy choice are the mlp policy
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    assert PPOAgent.from_checkpoint(broken).config.get("policy") is None
    config["observation_normalization"] = {"leaves": {}}
    (broken / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match="needs clip, epsilon and leaves"):
        PPOAgent.from_checkpoint(broken)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"access": "T+X"}, "access must be one of"),
        ({"env_options": {}}, "feedback"),
        ({"env_options": {**HEAR2ACT, "split": "test"}}, "split"),
        ({"vec_env": "threads"}, "vec_env"),
        ({"n_envs": 0}, "n_envs"),
        ({"eval_split": "validation"}, "eval_split"),
        ({"train_env_options": {"turn_cost": 0.1}}, "both env_options and train_env_options"),
        ({"train_env_options": {"split": "dev"}}, "split"),
    ],
)
def test_bad_settings_are_refused(tmp_path, kwargs, match):
    settings = {**TINY, "env_options": HEAR2ACT, **kwargs}
    with pytest.raises(ValueError, match=match):
        PPOSettings(out=tmp_path, **settings)


def test_a_finished_run_is_reused_and_a_different_one_never_overwritten(trained):
    out, result = trained
    before = (out / CURVE_FILE).read_text()
    again = train(PPOSettings(out=out, env_options=HEAR2ACT, **TINY))
    assert again["reused"] and again["metrics"] == json.loads(json.dumps(result["metrics"]))
    assert again["evaluation"] == result["evaluation"] and again["checkpoint"] == result["checkpoint"]
    with pytest.raises(FileExistsError, match="different"):
        train(PPOSettings(out=out, env_options=HEAR2ACT, **{**TINY, "seed": 7}))
    assert (out / CURVE_FILE).read_text() == before


def test_train_env_options_reach_the_training_envs_only(tmp_path):
    """Twin users are resampled in training; the held-out evaluation plays the bank's users."""
    from training.ppo.curve import evaluation_config
    from training.ppo.envs import make_vec_env

    settings = PPOSettings(
        out=tmp_path, env_options=HEAR2ACT, train_env_options={"hidden_users": "resample"}, **TINY
    )
    envs = make_vec_env(settings)
    assert {env.unwrapped.hidden_users for env in envs.envs} == {"resample"}
    first = scenarios_for("train")[0].scenario_id
    golds = set()
    for seed in range(30):  # one training scenario, several users behind it
        envs.envs[0].reset(seed=seed, options={"item_id": first})
        golds.add(envs.envs[0].unwrapped.scenario.gold_option)
    envs.close()
    assert len(golds) > 1
    assert "hidden_users" not in dict(evaluation_config(settings).env_kwargs)
    result = train(settings)
    config = read_config(tmp_path / "checkpoints" / "final")
    assert config["train_env_options"] == {"hidden_users": "resample"} and config["env_options"] == HEAR2ACT
    played = (tmp_path / "evals" / "final" / "results.jsonl").read_text().splitlines()
    bank = {s.scenario_id: s.gold_option for s in scenarios_for("test")}
    assert all(json.loads(line)["gold_option"] == bank[json.loads(line)["item_id"]] for line in played)
    assert result["metrics"]["1st%"]["n_scenarios"] == 4


def test_cli_trains_with_wandb_offline_and_eval_plays_the_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    runner = CliRunner()
    out = tmp_path / "gate"
    args = ["train", "ppo", "--out", str(out), "--env", "hear_gym/VoiceGate-v0", "--access", "T"]
    tiny = ["--steps", "128", "--n-envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1"]
    result = runner.invoke(app, [*args, *tiny, "--eval-limit", "6", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "switch_mute" in result.output or "false_execution" in result.output
    assert list((out / "wandb").glob("offline-run-*"))
    again = runner.invoke(app, [*args, *tiny, "--eval-limit", "6", "--no-progress"])
    assert again.exit_code == 0 and "already holds this finished run" in again.output
    checkpoint = out / "checkpoints" / "final"
    evaluation = runner.invoke(
        app,
        [
            "eval",
            "--env",
            "hear_gym/VoiceGate-v0",
            "--out",
            str(tmp_path / "eval"),
            "--cell",
            f"ppo:{checkpoint}@T",
            "--limit",
            "6",
            "--no-progress",
        ],
    )
    assert evaluation.exit_code == 0, evaluation.output
    records = [json.loads(line) for line in (tmp_path / "eval" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["agent"] == f"ppo:{checkpoint}" for r in records)
    bad = runner.invoke(app, ["eval", "--out", str(tmp_path / "x"), "--cell", "ppo@T"])
    assert bad.exit_code != 0 and "ppo:PATH" in bad.output
    bad = runner.invoke(app, ["train", "ppo", "--out", str(tmp_path / "y"), "--option", "turn_cost=0.1"])
    assert bad.exit_code != 0 and "feedback" in bad.output


def test_trains_on_the_onset_family_too(tmp_path):
    """Any registered family: Onset's grouped metrics come out flat in the curve; its measured
    leaf is standardized in training and the checkpoint carries the statistics."""
    out = tmp_path / "onset"
    result = train(
        PPOSettings(out=out, env_id="hear_gym/Onset-v0", access="A", **{**TINY, "total_steps": 128})
    )
    assert "all/post_onset_accuracy" in result["metrics"]
    rows = _curve(out)
    assert rows[-1]["metrics"]["clean/pre_onset_exposed"]["point"] is not None
    assert any("return" in r for r in rows if r["kind"] == "train")
    normalization = read_config(out / "checkpoints" / "final")["observation_normalization"]
    assert set(normalization["leaves"]) == {"acoustic"}
    assert np.any(np.asarray(normalization["leaves"]["acoustic"]["mean"]) != 0.0)  # it was updated


def test_measured_leaves_are_the_unbounded_audio_measurements():
    import gymnasium as gym

    from training.ppo.envs import measured_leaves

    def leaves(env_id, access, **options):
        env = gym.make(env_id, access=access, observation="features", **options)
        return measured_leaves(env.observation_space)

    assert leaves("hear_gym/Hear2Act-v0", "A+T", **HEAR2ACT) == ["prosody", "prosody_vs_request"]
    assert leaves("hear_gym/Hear2Act-v0", "T", **HEAR2ACT) == []
    assert leaves("hear_gym/VoiceGate-v0", "A+T") == ["change"]


def test_the_agent_standardizes_as_vec_normalize_does(tmp_path):
    from agents.ppo import standardized
    from training.ppo.envs import make_vec_env, normalization_stats

    settings = PPOSettings(out=tmp_path, env_id="hear_gym/Onset-v0", access="A", **TINY)
    envs = make_vec_env(settings)
    obs = envs.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        masks = np.asarray(envs.env_method("action_masks"))
        obs, *_ = envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    raw, expected = envs.get_original_obs(), envs.normalize_obs(envs.get_original_obs())
    stats = json.loads(json.dumps(normalization_stats(envs)))  # as the checkpoint stores them
    envs.close()
    for row in range(settings.n_envs):
        mine = standardized({k: v[row] for k, v in raw.items()}, stats)
        assert set(mine) == set(expected)
        for key in expected:
            np.testing.assert_allclose(mine[key], expected[key][row], rtol=1e-6, atol=1e-6)
    assert normalization_stats(None) == {}
    unnormalized = make_vec_env(PPOSettings(**{**vars(settings), "normalize_observation": False}))
    assert not hasattr(unnormalized, "obs_rms")  # no VecNormalize
    unnormalized.close()


def test_a_run_from_before_normalization_reads_as_unnormalized(trained, tmp_path):
    out, _ = trained
    saved = json.loads((out / "settings.json").read_text())
    assert saved["normalize_observation"] is True
    del saved["normalize_observation"]
    old = tmp_path / "old"
    saved["out"] = str(old)
    old.mkdir()
    (old / "settings.json").write_text(json.dumps(saved))
    (old / CURVE_FILE).write_text((out / CURVE_FILE).read_text())
    with pytest.raises(FileExistsError, match="different"):
        train(PPOSettings(out=old, env_options=HEAR2ACT, **TINY))
    reused = train(PPOSettings(out=old, env_options=HEAR2ACT, normalize_observation=False, **TINY))
    assert reused["reused"]


def test_measured_statistics_are_seeded_and_standardize_what_they_measured(tmp_path):
    """The rllib backend's fixed standardization: the same seed gives the same statistics, they
    standardize the seeded random walk they were measured on to mean 0 and variance 1, and there
    are none without a measured leaf or with normalization off."""
    import gymnasium as gym

    from agents.ppo import standardized
    from training.ppo.envs import CLIP_OBS, EPSILON, measured_statistics

    onset = dict(out=tmp_path, env_id="hear_gym/Onset-v0", access="A", wandb_project=None)
    stats = measured_statistics(PPOSettings(**onset), steps=200)
    assert stats == measured_statistics(PPOSettings(**onset), steps=200)
    assert stats != measured_statistics(PPOSettings(**onset, seed=1), steps=200)
    assert set(stats["leaves"]) == {"acoustic"} and stats["epsilon"] == EPSILON
    env = gym.make("hear_gym/Onset-v0", access="A", observation="features", split="train")
    rng = np.random.default_rng(0)
    observation, _ = env.reset(seed=0)
    seen, raw = [], []
    for _ in range(200):  # the walk measured_statistics takes with seed 0
        seen.append(standardized(observation, stats)["acoustic"])
        raw.append(observation["acoustic"])
        observation, _, terminated, truncated, _ = env.step(
            int(rng.choice(np.flatnonzero(observation["action_mask"])))
        )
        if terminated or truncated:
            observation, _ = env.reset()
    leaf = stats["leaves"]["acoustic"]
    varying = np.asarray(leaf["var"]) > 1e-6
    assert varying.sum() > 100
    z = (np.asarray(raw, np.float64) - leaf["mean"]) / np.sqrt(np.asarray(leaf["var"]) + EPSILON)
    np.testing.assert_allclose(np.mean(z, 0)[varying], 0.0, atol=1e-6)
    np.testing.assert_allclose(np.var(z, 0)[varying], 1.0, atol=1e-3)
    # the agent's values are those, clipped as VecNormalize clips (a rare outlier beyond 10 sd)
    np.testing.assert_allclose(np.asarray(seen), np.clip(z, -CLIP_OBS, CLIP_OBS), atol=1e-4)
    assert measured_statistics(PPOSettings(**onset, normalize_observation=False), steps=10) == {}
    assert measured_statistics(PPOSettings(out=tmp_path, env_options=HEAR2ACT, **TINY), steps=10) == {}


def test_training_computes_on_one_thread_and_restores_the_pools():
    import threadpoolctl
    import torch

    from training.ppo.train import one_compute_thread

    before_torch, before_pools = torch.get_num_threads(), threadpoolctl.threadpool_info()
    with one_compute_thread():
        assert torch.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpoolctl.threadpool_info())
    assert torch.get_num_threads() == before_torch and threadpoolctl.threadpool_info() == before_pools


def test_subprocess_envs_train_as_in_process_envs(trained, tmp_path):
    first, _ = trained
    subproc = tmp_path / "subproc"
    train(PPOSettings(out=subproc, env_options=HEAR2ACT, **{**TINY, "vec_env": "subproc"}))
    assert _curve(subproc) == _curve(first)


def test_init_from_starts_at_the_checkpoint_weights(trained, tmp_path):
    """With a zero learning rate the fine-tuned policy ends where it started: at the weights of
    the checkpoint it was initialised from (under another turn cost: the reward may differ)."""
    first, _ = trained
    checkpoint = first / "checkpoints" / "final"
    tuned = tmp_path / "tuned"
    options = {**HEAR2ACT, "turn_cost": 0.1}
    train(PPOSettings(out=tuned, env_options=options, init_from=checkpoint, learning_rate=0.0, **TINY))
    a, b = _weights(first), _weights(tuned)
    assert a.keys() == b.keys() and all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert json.loads((tuned / "settings.json").read_text())["init_from"] == str(checkpoint)


def test_init_from_keeps_the_checkpoint_standardization(tmp_path):
    onset = dict(env_id="hear_gym/Onset-v0", access="A", **{**TINY, "total_steps": 128})
    train(PPOSettings(out=tmp_path / "first", **onset))
    checkpoint = tmp_path / "first" / "checkpoints" / "final"
    train(PPOSettings(out=tmp_path / "tuned", init_from=checkpoint, **onset))
    before = read_config(checkpoint)["observation_normalization"]
    assert read_config(tmp_path / "tuned" / "checkpoints" / "final")["observation_normalization"] == before
    with pytest.raises(ValueError, match="trained with standardized measured leaves"):
        PPOSettings(out=tmp_path / "x", init_from=checkpoint, normalize_observation=False, **onset)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"access": "T+S"}, "its access is 'T', not 'T\\+S'"),
        ({"net_arch": (32,)}, "its net_arch"),
        ({"policy": "per_option"}, "its policy is 'mlp'"),
        ({"backend": "rllib"}, "init_from needs backend 'sb3'"),
    ],
)
def test_init_from_a_checkpoint_that_does_not_fit_is_refused(trained, tmp_path, kwargs, match):
    checkpoint = trained[0] / "checkpoints" / "final"
    with pytest.raises(ValueError, match=match):
        PPOSettings(out=tmp_path / "x", env_options=HEAR2ACT, init_from=checkpoint, **{**TINY, **kwargs})
    with pytest.raises(ValueError, match="is not a PPO checkpoint"):
        PPOSettings(out=tmp_path / "x", env_options=HEAR2ACT, init_from=tmp_path, **TINY)


def test_cli_refuses_an_init_from_that_is_no_checkpoint(tmp_path):
    out = tmp_path / "run"
    args = ["train", "ppo", "--out", str(out), "--option", "feedback=prosody", "--init-from", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0 and "is not a PPO checkpoint" in result.output
    assert not out.exists()


@pytest.mark.parametrize("option", ["turn_cost=nan", "turn_cost=inf", "no_such_option=1"])
def test_a_bad_env_option_is_refused_before_the_run_folder_exists(tmp_path, option):
    out = tmp_path / "run"
    args = ["train", "ppo", "--out", str(out), "--option", "feedback=prosody", "--option", option]
    result = CliRunner().invoke(app, [*args, "--steps", "64", "--no-progress", "--no-wandb"])
    assert result.exit_code == 2 and result.output.startswith("error:"), result.output
    assert "Traceback" not in result.output and not out.exists()
