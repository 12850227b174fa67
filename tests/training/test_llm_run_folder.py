"""The language-model trainers' run folders: an interrupted SFT or GRPO run resumes from TRL's
last checkpoint to the same final step with an intact curve; one writer per folder; the model is
checked before anything is written; files are never written through planted links."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lock_holder import lock_held_elsewhere

pytest.importorskip("trl")
from typer.testing import CliRunner  # noqa: E402

from hear_gym.cli.app import app  # noqa: E402
from training.llm.evaluation import PeriodicEvaluation  # noqa: E402
from training.llm.grpo import train_grpo  # noqa: E402
from training.llm.run_folder import CURVE_FILE, SETTINGS_FILE  # noqa: E402
from training.llm.sft import DEMOS_FILE, train_sft  # noqa: E402
from training.tiny_model import build_tiny_causal_lm  # noqa: E402

EVALUATION = {"limit": 1, "families": ("speaker_switch",), "base": False, "batch_size": 1}


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


def _sft(tiny_lm, out: Path, **overrides):
    settings = dict(
        out=out,
        model=str(tiny_lm),
        demo_limit=8,
        max_steps=4,
        batch_size=4,
        lora={"enabled": False},
        evaluation=EVALUATION,
        eval_every=2,
        wandb_project=None,
        progress=False,
    )
    return train_sft(**{**settings, **overrides})


def _grpo(tiny_lm, out: Path, **overrides):
    settings = dict(
        out=out,
        model=str(tiny_lm),
        item_limit=4,
        num_generations=4,
        batch_size=4,
        max_steps=4,
        max_completion_length=8,
        lora={"enabled": False},
        evaluation=EVALUATION,
        eval_every=2,
        wandb_project=None,
        progress=False,
    )
    return train_grpo(**{**settings, **overrides})


class Interrupted(Exception):
    pass


def _interrupt_at_step(monkeypatch, step: int) -> None:
    """Fail the run at the end of optimizer step ``step`` (before its checkpoint is saved)."""
    on_step_end = PeriodicEvaluation.on_step_end

    def failing(self, args, state, control, **kwargs):
        if state.global_step >= step:
            raise Interrupted
        return on_step_end(self, args, state, control, **kwargs)

    monkeypatch.setattr(PeriodicEvaluation, "on_step_end", failing)


def _rows(out: Path):
    return [json.loads(line) for line in (out / CURVE_FILE).read_text().splitlines()]


# the sft case (10 s) runs in the slow tier: both go through the same run-folder resume code
@pytest.mark.parametrize("trainer", [pytest.param(_sft, marks=pytest.mark.slow), _grpo], ids=["sft", "grpo"])
def test_an_interrupted_run_resumes_from_its_last_checkpoint(tiny_lm, tmp_path, monkeypatch, trainer):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _interrupt_at_step(patch, 4)
        with pytest.raises(Interrupted):
            trainer(tiny_lm, out)
    assert [p.name for p in (out / "trainer").glob("checkpoint-*")] == ["checkpoint-2"]
    assert max(r["step"] for r in _rows(out)) == 3  # a row past the checkpoint, to be dropped
    with (out / CURVE_FILE).open("a") as torn:
        torn.write('{"kind": "train", "st')  # the kill cut an append short
    result = trainer(tiny_lm, out)
    rows = _rows(out)
    assert [r["step"] for r in rows if r["kind"] == "train" and "loss" in r] == [1, 2, 3, 4]
    evals = [(r["checkpoint"], r["step"]) for r in rows if r["kind"] == "eval"]
    assert evals == [("step_2", 2), ("final", 4)]
    assert Path(result["model"]).is_dir()
    with pytest.raises(FileExistsError, match="already holds this training run, finished"):
        trainer(tiny_lm, out)
    with pytest.raises(FileExistsError, match="already holds a different training run"):
        trainer(tiny_lm, out, seed=5)


def test_a_second_writer_is_refused_and_the_folder_left_alone(tiny_lm, tmp_path):
    out = tmp_path / "run"
    with lock_held_elsewhere(out):
        before = sorted(p.name for p in out.iterdir())
        for command in ("sft", "grpo"):
            args = ["train", command, "--out", str(out), "--model", str(tiny_lm), "--no-wandb"]
            args += ["--max-steps", "1", "--eval-limit", "1", "--no-eval-base", "--no-progress"]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 2 and "in use by another run" in result.output
            assert result.output.startswith("error:") and "Traceback" not in result.output
        assert sorted(p.name for p in out.iterdir()) == before


def test_a_folder_that_is_no_model_is_refused_before_anything_is_written(tiny_lm, tmp_path):
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("not a model")
    no_tokenizer = tmp_path / "no_tokenizer"
    no_tokenizer.mkdir()
    (no_tokenizer / "config.json").write_text((tiny_lm / "config.json").read_text())
    for model in (junk, no_tokenizer):
        out = tmp_path / f"run_{model.name}"
        result = CliRunner().invoke(
            app, ["train", "sft", "--out", str(out), "--model", str(model), "--no-wandb"]
        )
        message = " ".join(result.output.split())  # the console wraps long lines
        assert result.exit_code == 2 and f"model {model}: not a model folder" in message
        assert message.startswith("error:") and "Traceback" not in message
        assert not out.exists()


def test_files_are_never_written_through_planted_links(tiny_lm, tmp_path):
    out, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / DEMOS_FILE).write_text("precious\n")
    os.symlink(elsewhere / DEMOS_FILE, out / DEMOS_FILE)
    for name in (SETTINGS_FILE, CURVE_FILE):  # links to files they would create elsewhere
        os.symlink(elsewhere / f"new_{name}", out / name)
    _sft(tiny_lm, out, max_steps=1, eval_every=0)
    assert not any(p.is_symlink() for p in out.iterdir())
    assert sorted(p.name for p in elsewhere.iterdir()) == [DEMOS_FILE]
    assert (elsewhere / DEMOS_FILE).read_text() == "precious\n"
    assert _rows(out) and json.loads((out / SETTINGS_FILE).read_text())["settings"]["max_steps"] == 1
