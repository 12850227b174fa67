"""What the language-model trainers (``training.sft``, ``training.grpo``) share: LoRA defaults,
device arguments, the run folder (its lock, settings and curve log: ``curve.jsonl`` and W&B;
resuming an interrupted run from TRL's last checkpoint), and the in-env evaluation of a saved
model through the project's runner.

Defaults follow VoxGate's Table 8: LoRA rank 32, alpha 64 on the attention q, k, v, o
projections. On a machine without CUDA everything runs on CPU in float32 (TRL needs
``use_cpu=True`` and ``bf16=False`` said explicitly there).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from transformers import TrainerCallback

from agents.hear2act.llm import LLMAgent
from agents.voicegate.llm import LLMGateAgent
from hear_gym.core.registry import family
from hear_gym.core.run_folder import open_append, run_folder_lock, strict_json, write_json_atomic
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.provenance import file_fingerprint, provenance
from hear_gym.eval.runner import Cell, RunConfig
from hear_gym.eval.wandb_log import start_run
from hear_gym.stats.bootstrap import flat_estimates
from training.curve_rows import clear_after, finite, kept_rows, read_rows

CURVE_FILE = "curve.jsonl"
WANDB_STEP = "global_step"  # the x-axis of every W&B chart of a language-model run
SETTINGS_FILE = "settings.json"
TRAINER_DIR = "trainer"  # TRL's output_dir: its checkpoints
FINAL_DIR = "final"
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
# The agent that plays a saved text model in each family (entry point "llm" of its group).
CHAT_AGENTS = {"hear_gym/Hear2Act-v0": LLMAgent, "hear_gym/VoiceGate-v0": LLMGateAgent}
EVAL_AGENT = "llm"


@dataclass(frozen=True)
class Player:
    """The agent that plays a saved model in evaluations: its entry-point name, its class, and the
    kind of chat client that loads the model (``hf`` text, ``hf-audio`` audio)."""

    name: str
    agent_class: type
    client: str = "hf"


@dataclass
class LoraSettings:
    enabled: bool = True
    rank: int = 32
    alpha: int = 64
    targets: tuple[str, ...] = LORA_TARGETS
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.rank < 1 or self.alpha < 1 or not self.targets:
            raise ValueError("LoRA needs rank >= 1, alpha >= 1 and at least one target module")
        self.targets = tuple(self.targets)

    def peft_config(self):
        if not self.enabled:
            return None
        from peft import LoraConfig

        return LoraConfig(
            r=self.rank,
            lora_alpha=self.alpha,
            lora_dropout=self.dropout,
            target_modules=list(self.targets),
            task_type="CAUSAL_LM",
        )


@dataclass
class EvalSettings:
    """Which held-out episodes a saved model plays after (and, with ``base``, before) training."""

    access: str | None = None  # None: the condition the trainer's data come from
    split: str = "test"
    limit: int | None = None  # first N episodes
    families: tuple[str, ...] | None = None  # VoiceGate families; None: the family's default
    batch_size: int = 16  # lockstep episodes per generate call
    base: bool = True  # also evaluate the untrained model, for the lift
    env_options: dict[str, Any] | None = None  # None: the trainer's env options
    state_probe: str | None = None  # Hear2Act T+S^: the concern-probe checkpoint writing the channel

    def resolved(
        self, access: str, env_options: dict[str, Any], state_probe: str | None = None
    ) -> EvalSettings:
        resolved = replace(
            self,
            access=self.access or access,
            env_options=dict(env_options if self.env_options is None else self.env_options),
            state_probe=self.state_probe or state_probe,
        )
        if resolved.access == "T+S^" and resolved.state_probe is None:
            raise ValueError("T+S^ evaluations need state_probe (a `hear-gym train probe` checkpoint)")
        return resolved

    def plugin_objects(self) -> dict[str, Any]:
        """Objects the evaluation's env gets beside its options (``gym.make`` kwargs)."""
        if self.state_probe is None:
            return {}
        from agents.hear2act.audio_probe import concern_inferrer

        return {"state_inferrer": concern_inferrer(self.state_probe)}

    def plugin_record(self) -> tuple[tuple[str, str], ...]:
        """How the run records those objects (``RunConfig.plugins``)."""
        if self.state_probe is None:
            return ()
        return (("state_inferrer", file_fingerprint(Path(self.state_probe))),)


def nested_settings(lora, evaluation) -> tuple[LoraSettings, EvalSettings]:
    """LoRA and evaluation settings as given or from dicts (the CLI and JSON pass dicts)."""
    lora = LoraSettings(**lora) if isinstance(lora, dict) else lora
    evaluation = EvalSettings(**evaluation) if isinstance(evaluation, dict) else evaluation
    return lora, evaluation


def check_group_batch(batch_size: int, num_generations: int) -> None:
    """A step's completions over all processes (``WORLD_SIZE``, set by torchrun / accelerate
    launch) must form whole groups; one process may hold part of a group."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if (batch_size * world) % num_generations:
        raise ValueError(
            f"batch_size x processes ({batch_size} x {world}) must be a multiple of num_generations "
            f"({num_generations}): every group needs all its completions"
        )


def seeded_sample(items: Sequence, limit: int | None, seed: int) -> list:
    """``limit`` of ``items`` drawn with ``seed`` and kept in their order (all when None): a
    sample across every family of a list generated family by family."""
    if limit is None:
        return list(items)
    keep = np.random.default_rng(seed).permutation(len(items))[:limit]
    return [items[i] for i in sorted(keep)]


def checkpoint_arguments(every: int) -> dict[str, Any]:
    """TRL's own checkpoints (``trainer/checkpoint-N``: model, optimizer, scheduler, RNG states)
    every ``every`` optimizer steps, the last one kept, for an interrupted run to resume from;
    none for 0 (an interrupted run then starts over)."""
    if not every:
        return {"save_strategy": "no"}
    return {"save_strategy": "steps", "save_steps": every, "save_total_limit": 1}


def sft_arguments(settings, checkpoint_every: int = 0) -> dict[str, Any]:
    """``SFTConfig`` arguments the SFT trainers share, from their settings' usual fields."""
    return {
        "output_dir": str(settings.out / TRAINER_DIR),
        "num_train_epochs": settings.epochs,
        "max_steps": settings.max_steps or -1,
        "learning_rate": settings.learning_rate,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation,
        "seed": settings.seed,
        "data_seed": settings.seed,
        "logging_steps": 1,
        **checkpoint_arguments(checkpoint_every),
        "report_to": [],  # CurveLog writes W&B, with the run's settings and provenance
        "disable_tqdm": not settings.progress,
        **device_arguments(),
    }


def grpo_arguments(settings, checkpoint_every: int = 0) -> dict[str, Any]:
    """``GRPOConfig`` arguments every GRPO trainer here shares, from its settings' usual fields:
    ``loss_type="dapo"`` (it drops masked rows, e.g. zero-variance paired groups, from the token
    count), one log row per step, TRL's checkpoints every ``checkpoint_every`` steps (for
    resuming), W&B through ``CurveLog``."""
    return {
        "output_dir": str(settings.out / TRAINER_DIR),
        "num_generations": settings.num_generations,
        "per_device_train_batch_size": settings.batch_size,
        "max_completion_length": settings.max_completion_length,
        "max_steps": settings.max_steps,
        "learning_rate": settings.learning_rate,
        "temperature": settings.temperature,
        "beta": settings.beta,
        "loss_type": "dapo",
        "seed": settings.seed,
        "data_seed": settings.seed,
        "logging_steps": 1,
        **checkpoint_arguments(checkpoint_every),
        "report_to": [],
        "disable_tqdm": not settings.progress,
        **device_arguments(),
    }


def device_arguments() -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    arguments = {"use_cpu": not cuda, "bf16": bool(cuda and torch.cuda.is_bf16_supported())}
    if not cuda:  # recomputing activations only saves GPU memory; on CPU it costs time
        arguments["activation_checkpointing"] = False
    return arguments


def check_model_folder(model: str) -> str:
    """``model`` (a checkpoint or LoRA adapter folder, or a cached hub id) as the trainers record
    it, after checking that its config, weights and tokenizer are there and load: a clear error
    now, before anything is written into the run folder, not after the demonstrations are built."""
    from transformers import AutoConfig, AutoTokenizer

    from agents.llm.clients import base_model_of, processing_source

    base, tokenizer = base_model_of(model), processing_source(model)
    try:
        AutoConfig.from_pretrained(base, local_files_only=True)
        _local_files(base, WEIGHT_FILES, "weights")
        _local_files(tokenizer, TOKENIZER_FILES, "tokenizer")
        AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"model {model}: not a model folder whose config, weights and tokenizer load ({reason}); "
            "pass the folder that holds the checkpoint"
        ) from None
    # A local folder by absolute path: a saved LoRA adapter records it as its base model.
    return str(Path(model).resolve()) if Path(model).is_dir() else str(model)


WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")
# transformers builds an empty tokenizer from a config alone: the files are checked first
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json")


def _local_files(folder: str, patterns: tuple[str, ...], what: str) -> None:
    if Path(folder).is_dir() and not any(any(Path(folder).glob(p)) for p in patterns):
        raise ValueError(f"no {what} in {folder} (none of {', '.join(patterns)})")


# -- evaluation in env loops -------------------------------------------------------------------
def evaluation_config(env_id: str, evaluation: EvalSettings, seed: int, agent: str = EVAL_AGENT) -> RunConfig:
    env_family = family(env_id)
    env_family.check_access(evaluation.access)
    options = dict(evaluation.env_options)
    cell_options = tuple((k, str(options.pop(k))) for k in env_family.cell_options if k in options)
    missing = [k for k in env_family.cell_options if k not in dict(cell_options)]
    if missing:
        raise ValueError(f"{env_id} evaluations name the {missing} of a cell: set them in env_options")
    if evaluation.families is None:
        episodes = env_family.episode_ids(evaluation.split)
    else:
        episodes = env_family.episode_ids(evaluation.split, tuple(evaluation.families))
    return RunConfig(
        env_id,
        (Cell(agent, evaluation.access, cell_options),),
        tuple(episodes[: evaluation.limit]),
        seed=seed,
        env_kwargs=tuple(sorted(options.items())),
        plugins=evaluation.plugin_record(),
    )


def evaluate_model(
    model: str | Path,
    env_id: str,
    evaluation: EvalSettings,
    out_dir: Path,
    seed: int = 0,
    player: Player | None = None,
) -> dict[str, Any]:
    """Play the saved model (a checkpoint or LoRA adapter folder) on held-out episodes with
    ``player`` (default: the family's text ``llm`` agent); the cell's metrics with CIs, grouped
    names joined with "/"."""
    player = player or Player(EVAL_AGENT, CHAT_AGENTS[env_id])
    config = evaluation_config(env_id, evaluation, seed, player.name)
    agents = {player.name: player.agent_class.from_client_spec(f"{player.client}:{model}")}
    metadata = evaluate(
        out_dir,
        config,
        agents,
        progress=False,
        batch_size=evaluation.batch_size,
        env_objects=evaluation.plugin_objects(),
    )
    return flat_estimates(metadata["cells"][config.cells[0].name]["metrics"])


# -- curves ------------------------------------------------------------------------------------
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


def main_process() -> bool:
    """True unless this is a non-zero rank of a distributed launch (torchrun, accelerate launch):
    one process writes the run folder, W&B and the evaluations; every process trains."""
    return int(os.environ.get("RANK", "0")) == 0


def last_checkpoint(out: Path) -> str | None:
    """TRL's newest whole checkpoint of the run (``trainer_state.json`` is written last)."""
    folders = [p for p in (out / TRAINER_DIR).glob("checkpoint-*") if (p / "trainer_state.json").is_file()]
    newest = max(folders, key=lambda p: int(p.name.split("-")[1]), default=None)
    return None if newest is None else str(newest)


def _what_is_trained(settings_json: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings_json.items() if k not in ("progress", "wandb_project")}


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
        if not isinstance(saved, dict) or _what_is_trained(saved.get("settings") or {}) != _what_is_trained(
            record["settings"]
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


def evaluation_rows(
    curve: CurveLog,
    models: Sequence[tuple[str, str | Path, int]],
    env_id: str,
    evaluation: EvalSettings,
    seed: int,
    player: Player | None = None,
) -> dict[str, dict[str, Any]]:
    """Evaluate each (name, model folder, training step) and log it; the metrics by name."""
    results = {}
    for name, model, step in models:
        metrics = evaluate_model(model, env_id, evaluation, curve.path.parent / "evals" / name, seed, player)
        curve.write({"kind": "eval", "step": step, "checkpoint": name, "metrics": metrics})
        results[name] = metrics
    return results


class PeriodicEvaluation(TrainerCallback):
    """Every ``every`` optimizer steps (before the last), save the model being trained to
    ``checkpoints/step_N`` (a LoRA model saves its adapter) and play it on the held-out episodes,
    logged to the curve like the final evaluation."""

    def __init__(
        self,
        curve: CurveLog,
        every: int,
        env_id: str,
        evaluation: EvalSettings,
        seed: int,
        player: Player | None = None,
    ) -> None:
        self.curve, self.every, self.env_id = curve, every, env_id
        self.evaluation, self.seed, self.player = evaluation, seed, player

    def on_step_end(self, args, state, control, model=None, processing_class=None, **kwargs):
        step = int(state.global_step)
        if not self.every or step % self.every or step >= state.max_steps or not main_process():
            return
        name = f"step_{step}"
        folder = self.curve.path.parent / "checkpoints" / name
        model.save_pretrained(folder)
        processing_class.save_pretrained(folder)
        evaluation_rows(
            self.curve, [(name, folder, step)], self.env_id, self.evaluation, self.seed, self.player
        )


def run_training(
    trainer,
    curve: CurveLog,
    base_model: str | Path,
    env_id: str,
    evaluation: EvalSettings,
    seed: int,
    player: Player | None = None,
    env_timer=None,
) -> dict[str, Any]:
    """Train, save ``final/`` (safetensors: the adapter under LoRA, else the model; and the
    tokenizer or processor), then evaluate the base model (if asked) and ``final/``. With
    ``env_timer`` (anything with ``.seconds`` spent in the env), a ``timing`` row gives the env's
    share of training time. Returns the final folder, the metrics and the timing."""
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=curve.resume_from)
    seconds = time.perf_counter() - start
    final = curve.path.parent / FINAL_DIR
    trainer.save_model(str(final))  # the main process writes it (Trainer.save_model)
    steps = int(trainer.state.global_step)
    if not main_process():
        return {"model": str(final), "metrics": {}}
    trainer.processing_class.save_pretrained(str(final))
    timing = {}
    if env_timer is not None:
        timing = {
            "train_seconds": seconds,
            "env_seconds": env_timer.seconds,
            "env_share": env_timer.seconds / seconds,
        }
        curve.write({"kind": "timing", "step": steps, **timing})
    models = [("final", final, steps)]
    if evaluation.base:
        models.insert(0, ("base", base_model, 0))
    metrics = evaluation_rows(curve, models, env_id, evaluation, seed, player)
    return {"model": str(final), "metrics": metrics, **timing}
