"""PPO's held-out evaluations during training: they never change what the policy learns, and
``keep_best`` copies the evaluated checkpoint with the best held-out return to
``checkpoints/best`` (the later one on a tie), whole, replacing an earlier copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors.torch import load_file

from agents.ppo import WEIGHTS_FILE
from training.ppo.curve import CURVE_FILE, best_evaluated
from training.ppo.train import PPOSettings, copy_best, train

TINY = dict(total_steps=512, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, eval_limit=4)
TINY |= dict(wandb_project=None, progress=False, env_options={"feedback": "prosody", "turn_cost": 0.02})


def test_evaluating_during_training_does_not_change_what_is_learned(tmp_path):
    """Rebuilding a checkpoint's policy to play it draws torch's initial weights from the global
    generator training samples its actions from; ``agents.ppo.load_policy`` draws them on a fork."""
    quiet = train(PPOSettings(out=tmp_path / "quiet", eval_every=0, **TINY))
    evaluated = train(PPOSettings(out=tmp_path / "evaluated", eval_every=128, **TINY))
    rows = {
        name: [r for r in _rows(tmp_path / name) if r["kind"] == "train"] for name in ("quiet", "evaluated")
    }
    assert rows["quiet"] == rows["evaluated"]
    assert any(r["kind"] == "eval" and r["step"] < 512 for r in _rows(tmp_path / "evaluated"))
    weights = [load_file(str(Path(r["checkpoint"]) / WEIGHTS_FILE)) for r in (quiet, evaluated)]
    assert all((weights[0][k] == weights[1][k]).all() for k in weights[0])


def _rows(folder):
    return [json.loads(line) for line in (folder / CURVE_FILE).read_text().splitlines()]


def _run(tmp_path, returns: dict[str, float]):
    rows = [{"step": 1, "kind": "train", "return": 9.0}]  # a train row never counts
    for step, (name, value) in enumerate(returns.items(), start=2):
        folder = tmp_path / "checkpoints" / name
        folder.mkdir(parents=True)
        (folder / "policy.json").write_text(json.dumps({"name": name}))
        metrics = {"return": {"point": value, "low": value - 0.1, "high": value + 0.1}}
        rows.append({"step": step, "kind": "eval", "checkpoint": f"checkpoints/{name}", "metrics": metrics})
    (tmp_path / CURVE_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_the_best_return_wins_and_a_tie_goes_to_the_later_checkpoint(tmp_path):
    run = _run(tmp_path, {"step_10": 0.2, "step_20": 0.7, "step_30": 0.7, "final": 0.1})
    assert best_evaluated(run)[0] == "checkpoints/step_30"


def test_the_best_checkpoint_is_copied_and_replaces_an_earlier_copy(tmp_path):
    run = _run(tmp_path, {"step_10": 0.5, "final": 0.1})
    stale = run / "checkpoints" / "best"
    stale.mkdir()
    (stale / "old.txt").write_text("from an earlier choice")
    best = copy_best(run)
    assert sorted(p.name for p in best.iterdir()) == ["policy.json"]
    assert json.loads((best / "policy.json").read_text())["name"] == "step_10"
    assert not (run / "checkpoints" / "best.partial").exists()


def test_a_curve_without_evaluations_is_refused(tmp_path):
    (tmp_path / CURVE_FILE).write_text(json.dumps({"step": 1, "kind": "train", "return": 0.0}) + "\n")
    with pytest.raises(ValueError, match="no evaluation rows"):
        best_evaluated(tmp_path)


def test_cli_keep_best_copies_the_checkpoint_the_curve_chose(tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    out = tmp_path / "hear2act"
    args = ["train", "ppo", "--out", str(out), "--env", "hear_gym/Hear2Act-v0", "--access", "T"]
    args += ["--option", "feedback=explicit"]
    tiny = ["--steps", "256", "--n-envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1"]
    chosen = ["--eval-every", "128", "--eval-split", "dev", "--eval-limit", "6", "--keep-best"]
    result = CliRunner().invoke(app, [*args, *tiny, *chosen, "--no-progress", "--no-wandb"])
    assert result.exit_code == 0, result.output
    assert "best checkpoint on dev" in result.output
    name, _ = best_evaluated(out)
    for file in (out / name).iterdir():
        assert (out / "checkpoints" / "best" / file.name).read_bytes() == file.read_bytes()
