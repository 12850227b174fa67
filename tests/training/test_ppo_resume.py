"""An interrupted PPO run resumes where its last resume point left it and ends exactly as an
uninterrupted run; one writer per run folder; the run's files are never written through links."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from lock_holder import lock_held_elsewhere

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from agents.ppo import WEIGHTS_FILE  # noqa: E402
from hear_gym.cli.app import app  # noqa: E402
from hear_gym.core.run_folder import RunFolderBusy  # noqa: E402
from training.ppo import resume  # noqa: E402
from training.ppo.curve import CURVE_FILE  # noqa: E402
from training.ppo.resume import RESUME_DIR, latest_resume_state  # noqa: E402
from training.ppo.run_folder import SETTINGS_FILE  # noqa: E402
from training.ppo.train import PPOSettings, SB3Log, train  # noqa: E402

HEAR2ACT = {"feedback": "prosody", "turn_cost": 0.02}
# three rollouts of 128 steps, a periodic checkpoint at 128 and 256 (a resume point at each)
RESUMABLE = dict(
    env_options=HEAR2ACT,
    total_steps=384,
    n_envs=2,
    n_steps=64,
    batch_size=64,
    n_epochs=2,
    eval_every=128,
    eval_limit=2,
    wandb_project=None,
    progress=False,
)


class Interrupted(Exception):
    pass


def _interrupt_at(monkeypatch, step: int) -> None:
    """Fail the run at its env step ``step`` (as a kill would stop it there)."""
    on_step = SB3Log._on_step

    def failing(self):
        if self.num_timesteps >= step:
            raise Interrupted
        return on_step(self)

    monkeypatch.setattr(SB3Log, "_on_step", failing)


def _interrupt_the_final_evaluation(monkeypatch) -> None:
    """Fail the run as it plays its final checkpoint: training ended, rows past the last resume
    point were written, checkpoints/final exists."""
    from training.ppo import curve

    evaluate = curve.evaluate_checkpoint

    def failing(checkpoint, settings, out_dir):
        if checkpoint.name == "final":
            raise Interrupted
        return evaluate(checkpoint, settings, out_dir)

    monkeypatch.setattr(curve, "evaluate_checkpoint", failing)


def _final_weights(folder):
    return load_file(str(folder / "checkpoints" / "final" / WEIGHTS_FILE))


def _rows(folder):
    return [json.loads(line) for line in (folder / CURVE_FILE).read_text().splitlines()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo") / "whole"
    train(PPOSettings(out=out, **RESUMABLE))
    return out


# Onset under A: VecNormalize's running statistics are part of the state
ONSET = dict(
    RESUMABLE,
    env_id="hear_gym/Onset-v0",
    access="A",
    env_options={},
    total_steps=96,
    n_steps=16,
    batch_size=32,
    eval_every=32,
)


@pytest.mark.parametrize("settings", [RESUMABLE, ONSET], ids=["hear2act", "onset"])
def test_an_interrupted_run_resumes_to_the_same_weights_and_curve(tmp_path, monkeypatch, settings):
    uninterrupted, out = tmp_path / "whole", tmp_path / "run"
    train(PPOSettings(out=uninterrupted, **settings))
    with monkeypatch.context() as patch:
        _interrupt_the_final_evaluation(patch)
        with pytest.raises(Interrupted):
            train(PPOSettings(out=out, **settings))
    last_point = settings["total_steps"] - settings["eval_every"]
    assert latest_resume_state(out).name == f"step_{last_point}"
    assert max(r["step"] for r in _rows(out)) > last_point  # rows past it, to be dropped
    assert (out / "checkpoints" / "final").is_dir()  # made again from the resumed training
    with (out / CURVE_FILE).open("a") as torn:
        torn.write('{"step": 1, "kind": "tra')  # the kill cut an append short
    result = train(PPOSettings(out=out, **settings))
    assert not result["reused"]
    a, b = _final_weights(uninterrupted), _final_weights(out)
    assert a.keys() == b.keys() and all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert _rows(out) == _rows(uninterrupted)
    periodic = [
        f"step_{step}"
        for step in range(settings["eval_every"], settings["total_steps"], settings["eval_every"])
    ]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == sorted(["final", *periodic])
    assert train(PPOSettings(out=out, **settings))["reused"]  # finished: reported, not retrained


KILL_AT = textwrap.dedent(
    """
    import json, os, signal, sys
    from training.ppo.train import PPOSettings, SB3Log, train

    on_step = SB3Log._on_step

    def killed(self):
        if self.num_timesteps >= int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        return on_step(self)

    SB3Log._on_step = killed
    train(PPOSettings(out=sys.argv[1], **json.loads(sys.argv[2])))
    """
)


@pytest.mark.parametrize(
    "vec_env", ["dummy", pytest.param("subproc", marks=pytest.mark.slow)]
)  # subproc: 9 s
def test_a_run_killed_mid_rollout_resumes_to_the_same_weights(uninterrupted, tmp_path, vec_env):
    """SIGKILL at env step 320, past the resume point at 256, in a process of its own."""
    out, settings = tmp_path / "run", {**RESUMABLE, "vec_env": vec_env}
    killed = subprocess.run([sys.executable, "-c", KILL_AT, str(out), json.dumps(settings), "320"])
    assert killed.returncode == -signal.SIGKILL
    assert latest_resume_state(out).name == "step_256"
    train(PPOSettings(out=out, **settings))
    a, b = _final_weights(uninterrupted), _final_weights(out)
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert _rows(out) == _rows(uninterrupted)


def test_a_run_interrupted_before_its_first_resume_point_starts_over(uninterrupted, tmp_path, monkeypatch):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _interrupt_at(patch, 100)
        with pytest.raises(Interrupted):
            train(PPOSettings(out=out, **RESUMABLE))
    assert not (out / RESUME_DIR).exists()
    train(PPOSettings(out=out, **RESUMABLE))
    assert _rows(out) == _rows(uninterrupted)
    with pytest.raises(FileExistsError, match="different"):
        train(PPOSettings(out=out, **{**RESUMABLE, "seed": 3}))


def test_a_damaged_curve_line_is_named(tmp_path, monkeypatch):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _interrupt_at(patch, 200)
        with pytest.raises(Interrupted):
            train(PPOSettings(out=out, **RESUMABLE))
    lines = (out / CURVE_FILE).read_text().splitlines()
    lines[0] = lines[0][:10]
    (out / CURVE_FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"{CURVE_FILE}:1: not a JSON row"):
        train(PPOSettings(out=out, **RESUMABLE))


def test_a_second_writer_is_refused_and_the_folder_left_alone(tmp_path):
    out = tmp_path / "run"
    with lock_held_elsewhere(out):
        before = sorted(p.name for p in out.iterdir())
        with pytest.raises(RunFolderBusy, match="in use by another run"):
            train(PPOSettings(out=out, **RESUMABLE))
        args = ["train", "ppo", "--out", str(out), "--option", "feedback=prosody", "--steps", "128"]
        result = CliRunner().invoke(app, [*args, "--no-wandb", "--no-progress"])
        assert result.exit_code == 2 and "in use by another run" in result.output
        assert result.output.startswith("error:") and "Traceback" not in result.output
        assert sorted(p.name for p in out.iterdir()) == before


def test_files_are_never_written_through_planted_links(tmp_path):
    out, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    short = {**RESUMABLE, "total_steps": 128, "eval_every": 0}
    (elsewhere / SETTINGS_FILE).write_text("precious\n")
    os.symlink(elsewhere / SETTINGS_FILE, out / SETTINGS_FILE)
    with pytest.raises(ValueError, match=f"{SETTINGS_FILE}: not valid JSON"):  # no run of ours
        train(PPOSettings(out=out, **short))
    (out / SETTINGS_FILE).unlink()
    for name in (SETTINGS_FILE, CURVE_FILE):  # links to files they would create elsewhere
        os.symlink(elsewhere / f"new_{name}", out / name)
    train(PPOSettings(out=out, **short))
    assert not (out / SETTINGS_FILE).is_symlink() and not (out / CURVE_FILE).is_symlink()
    assert _rows(out) and json.loads((out / SETTINGS_FILE).read_text())["total_steps"] == 128
    assert sorted(p.name for p in elsewhere.iterdir()) == [SETTINGS_FILE]
    assert (elsewhere / SETTINGS_FILE).read_text() == "precious\n"


class _FakeCudaGenerators:
    """Stands in for torch.cuda's per-device generator states on a machine without CUDA."""

    def __init__(self, count: int):
        self.states = [torch.tensor([10 * i + 1, 10 * i + 2], dtype=torch.uint8) for i in range(count)]

    def get_all(self):
        return [s.clone() for s in self.states]

    def set_all(self, states):
        self.states = [s.clone() for s in states]


def _fake_cuda(monkeypatch, gpus, count: int) -> _FakeCudaGenerators:
    gpus(count)
    fake = _FakeCudaGenerators(count)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", fake.get_all)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", fake.set_all)
    return fake


def test_every_cuda_generator_is_saved_and_put_back(monkeypatch, gpus, tmp_path):
    saved = _fake_cuda(monkeypatch, gpus, 2)
    tensors = resume._cuda_rng_tensors()
    assert sorted(tensors) == ["cuda_rng.0", "cuda_rng.1"]
    restored = _fake_cuda(monkeypatch, gpus, 2)
    resume._restore_cuda_rng(tensors, tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(restored.states, saved.states, strict=True))


def test_resuming_on_another_device_count_warns(monkeypatch, gpus, tmp_path):
    _fake_cuda(monkeypatch, gpus, 1)
    tensors = resume._cuda_rng_tensors()
    gpus(0)
    with pytest.warns(UserWarning, match="saved with 1 CUDA device"):
        resume._restore_cuda_rng(tensors, tmp_path)


@pytest.mark.parametrize("damaged", [resume.TENSORS_FILE, resume.STATE_FILE])
def test_a_damaged_resume_point_is_named_in_one_line_and_can_be_discarded(
    uninterrupted, tmp_path, monkeypatch, damaged
):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _interrupt_at(patch, 300)
        with pytest.raises(Interrupted):
            train(PPOSettings(out=out, **RESUMABLE))
    point = latest_resume_state(out)
    (point / damaged).write_bytes((point / damaged).read_bytes()[:40])  # cut short, as by a full disk
    with pytest.raises(ValueError) as refused:
        train(PPOSettings(out=out, **RESUMABLE))
    message = str(refused.value)
    assert message.startswith(f"{point / damaged}: damaged resume point (") and "\n" not in message
    assert "--discard-resume" in message
    result = train(PPOSettings(out=out, **RESUMABLE), discard_resume=True)
    assert not result["reused"] and _rows(out) == _rows(uninterrupted)  # started over: the same run
    a, b = _final_weights(uninterrupted), _final_weights(out)
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


def test_the_cli_prints_a_damaged_resume_point_in_one_line_and_passes_discard_resume(tmp_path, monkeypatch):
    from hear_gym.cli import train as train_cli

    calls = []

    def damaged(**settings):
        calls.append(settings["discard_resume"])
        if not settings["discard_resume"]:
            raise resume.DamagedResumePoint(tmp_path / resume.TENSORS_FILE, Exception("header too small"))
        return {"reused": False, "checkpoint": "c", "evaluation": "e", "metrics": {}}

    monkeypatch.setattr(train_cli, "component", lambda name: damaged)
    args = ["train", "ppo", "--out", str(tmp_path), "--no-wandb", "--no-progress"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "damaged resume point (header too small)" in " ".join(refused.output.split())
    CliRunner().invoke(app, [*args, "--discard-resume"])
    assert calls == [False, True]
