"""The run folder of a language-model trainer: its lock (one writer), its ``settings.json`` and
its curve log (``CurveLog``: ``curve.jsonl`` and W&B), and resuming an interrupted run from TRL's
last checkpoint (``checkpoint_arguments`` asks TRL for them; ``start_curve`` finds the last)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from hear_gym.core.run_folder import open_append, run_folder_lock, strict_json, write_json_atomic
from hear_gym.eval.provenance import provenance
from hear_gym.eval.wandb_log import start_run
from training.curve_rows import clear_after, finite, kept_rows, read_rows
from training.llm.main_process import main_process
from training.run_settings import RUN_TIME as WATCHING
from training.run_settings import what_is_trained

CURVE_FILE = "curve.jsonl"
WANDB_STEP = "global_step"  # the x-axis of every W&B chart of a language-model run
SETTINGS_FILE = "settings.json"
TRAINER_DIR = "trainer"  # TRL's output_dir: its checkpoints
FINAL_DIR = "final"
# settings that say how a run is watched and where and how it computes, not what it trains: a
# folder resumes whatever they are now (a folder written before one existed included)
RUN_TIME = (*WATCHING, "device", "gradient_checkpointing", "trust_remote_code")
# settings added after run folders were written, with the value every earlier run trained with:
# a saved folder that lacks one holds that value (GRPO's entropy mask: before it, all tokens;
# SFT's demonstration-source options: before them, none; dtype: before it, auto)
ADDED_SINCE = {"top_entropy_quantile": 1.0, "demo_options": {}, "dtype": "auto"}


def trained_settings(settings_json: dict[str, Any]) -> dict[str, Any]:
    """What two runs must share to be one run, settings added since filled in on both sides."""
    return what_is_trained({**ADDED_SINCE, **settings_json}, RUN_TIME)


def checkpoint_arguments(every: int) -> dict[str, Any]:
    """TRL's own checkpoints (``trainer/checkpoint-N``: model, optimizer, scheduler, RNG states)
    every ``every`` optimizer steps, the last one kept, for an interrupted run to resume from;
    none for 0 (an interrupted run then starts over)."""
    if not every:
        return {"save_strategy": "no"}
    return {"save_strategy": "steps", "save_steps": every, "save_total_limit": 1}


# -- the curve and the folder ------------------------------------------------------------------
class CurveLog(TrainerCallback):
    """TRL's log rows (loss, reward, ...) and the in-env evaluations, to ``curve.jsonl`` and to
    a W&B run (offline unless ``WANDB_API_KEY`` is set)."""

    def __init__(
        self,
        out: Path,
        wandb_run=None,
        writes: bool = True,
        resume_from: str | None = None,
        lock: contextlib.ExitStack | None = None,
    ) -> None:
        self.path, self.wandb_run, self.writes = out / CURVE_FILE, wandb_run, writes
        self.resume_from = resume_from  # TRL's checkpoint an interrupted run resumes from
        self.lock = lock or contextlib.ExitStack()  # the run folder's lock, until finish_curve
        if wandb_run is not None:
            # Rows come out of step order (the base model is evaluated, at step 0, after
            # training), which W&B drops when logged with step=; a step metric keeps them.
            wandb_run.define_metric(WANDB_STEP)
            wandb_run.define_metric("*", step_metric=WANDB_STEP)

    def on_log(self, args, state, control, logs=None, **kwargs):
        scalars = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
        self.write({"kind": "train", "step": int(state.global_step), **scalars})

    def write(self, row: dict[str, Any]) -> None:
        if not self.writes:  # another process of a distributed launch writes the run
            return
        with open_append(self.path) as f:
            f.write(strict_json(finite(row)) + "\n")
        if self.wandb_run is not None:
            self.wandb_run.log({**_wandb_row(row), WANDB_STEP: row["step"]})


def _wandb_row(row: dict[str, Any]) -> dict[str, float]:
    if row["kind"] != "eval":
        return {f"{row['kind']}/{k}": v for k, v in row.items() if isinstance(v, float)}
    prefix = f"eval_{row['checkpoint']}"
    flat = {}
    for metric, estimate in row["metrics"].items():
        flat[f"{prefix}/{metric}"] = estimate["point"]
    return flat


def read_curve(out: Path) -> list[dict[str, Any]]:
    return read_rows(out / CURVE_FILE)


def last_checkpoint(out: Path) -> str | None:
    """TRL's newest whole checkpoint of the run (``trainer_state.json`` is written last)."""
    folders = [p for p in (out / TRAINER_DIR).glob("checkpoint-*") if (p / "trainer_state.json").is_file()]
    newest = max(folders, key=lambda p: int(p.name.split("-")[1]), default=None)
    return None if newest is None else str(newest)


def _prepare_folder(out: Path, record: dict[str, Any], final_evaluated: bool) -> str | None:
    """Write the run's settings and curve into ``out``; the checkpoint to resume from. A folder
    that holds this run (same settings), interrupted, keeps its curve rows up to TRL's last
    checkpoint (training rows and periodic evaluations at or before its step; a torn last line
    goes) and loses the outputs made after it; without a checkpoint the run starts over. A folder
    holding another run, or this one finished, is refused (never overwritten)."""
    saved_path, curve_path = out / SETTINGS_FILE, out / CURVE_FILE
    resume_from, step = None, 0
    if saved_path.exists() or curve_path.exists():
        try:
            saved = json.loads(saved_path.read_text(encoding="utf-8")) if saved_path.exists() else {}
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{saved_path}: not valid JSON ({exc.msg}, line {exc.lineno}); choose a new folder"
            ) from None
        if not isinstance(saved, dict) or trained_settings(saved.get("settings") or {}) != (
            trained_settings(record["settings"])
        ):
            raise FileExistsError(f"{out} already holds a different training run; choose a new folder")
        rows = read_rows(curve_path)
        done = any(r["kind"] == "eval" and r.get("checkpoint") == "final" for r in rows)
        if done or (not final_evaluated and (out / FINAL_DIR).is_dir()):
            raise FileExistsError(
                f"{out} already holds this training run, finished (its model: {out / FINAL_DIR}); "
                "choose a new folder to train again"
            )
        resume_from = last_checkpoint(out)
        step = 0 if resume_from is None else int(Path(resume_from).name.split("-")[1])
        clear_after(out, step, ("checkpoints", "evals"))
        shutil.rmtree(out / FINAL_DIR, ignore_errors=True)
    write_json_atomic(saved_path, record)

    def before_resume_point(row: dict[str, Any]) -> bool:
        periodic = row["kind"] == "train" or str(row.get("checkpoint", "")).startswith("step_")
        return periodic and row["step"] <= step

    kept_rows(curve_path, before_resume_point)
    return resume_from


def start_curve(
    out: Path, settings_json: dict[str, Any], env_id: str, project: str | None, final_evaluated: bool = True
) -> CurveLog:
    """The run folder, locked until ``finish_curve`` (``RunFolderBusy`` for a second writer):
    a new run, or this run (same settings) resumed from TRL's last checkpoint when it was
    interrupted (``CurveLog.resume_from``); a folder that holds another run, or this one
    finished (its final evaluation done; ``final/`` saved if ``final_evaluated`` is False), is
    refused."""
    if not main_process():
        return CurveLog(out, writes=False, resume_from=last_checkpoint(out))
    record = json.loads(
        json.dumps({"settings": settings_json, "provenance": provenance(env_id)}, default=str)
    )
    lock = contextlib.ExitStack()
    lock.enter_context(run_folder_lock(out))
    try:
        resume_from = _prepare_folder(out, record, final_evaluated)
        run = start_run(record, out, project) if project else None
    except BaseException:
        lock.close()
        raise
    return CurveLog(out, run, resume_from=resume_from, lock=lock)


def finish_curve(curve: CurveLog) -> None:
    try:
        if curve.wandb_run is not None:
            curve.wandb_run.finish()
    finally:
        curve.lock.close()
