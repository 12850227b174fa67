"""What the language-model trainers (``training.llm.sft``, ``training.llm.grpo``) share: LoRA defaults,
device arguments, TRL's arguments, the in-env evaluation of a saved model through the project's
runner, and the training loop around them; the run folder (lock, settings, curve, resuming) is
``training.llm.run_folder``.

Defaults follow VoxGate's Table 8: LoRA rank 32, alpha 64 on the attention q, k, v, o
projections. Every trainer takes a ``device`` (``agents.device``; default ``auto``): on the CPU
everything runs in float32 (TRL needs ``use_cpu=True`` and ``bf16=False`` said explicitly there);
on a GPU the float32 weights train under bfloat16 autocast where the GPU has bfloat16, and the
held-out evaluations load the model on the device training used.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from agents.device import DeviceError, resolve_device, supports_bf16
from agents.training_material import envs_with, training_material
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.provenance import file_fingerprint
from hear_gym.stats.bootstrap import flat_estimates
from training.llm.run_folder import FINAL_DIR, TRAINER_DIR, CurveLog, checkpoint_arguments, main_process

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
EVAL_AGENT = "llm"  # the entry-point name of the family's chat agent (its material's ``chat_agent``)


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
        # the state-inferrer plug-in, as `hear-gym eval --state-probe` finds it (its family's agents)
        (make_inferrer,) = [
            ep.load() for ep in entry_points(group="hear_gym.components") if ep.name == "state_inferrer"
        ]
        return {"state_inferrer": make_inferrer(self.state_probe)}

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
        **device_arguments(settings.device),
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
        **device_arguments(settings.device),
    }


def trainer_device(device: str) -> str:
    """``device`` resolved for a TRL trainer: ``"cpu"`` or ``"cuda:0"``. transformers' Trainer puts
    each process on its first visible GPU (``accelerate launch``: one GPU per process), so another
    index is refused with how to reach that GPU; ``DeviceError`` as ``resolve_device`` raises it."""
    resolved = resolve_device(device)
    if resolved not in ("cpu", "cuda:0"):
        raise DeviceError(
            f"device {device!r}: a trainer runs on the first visible GPU; choose GPU N with "
            "CUDA_VISIBLE_DEVICES=N and device cuda (several GPUs: accelerate launch)"
        )
    return resolved


def trained_on(trainer) -> str:
    """The device ``trainer`` trained on, as the clients' ``?device=`` takes it: a distributed CPU
    launch reports ``cpu:0``, which names no GPU."""
    device = trainer.args.device
    return "cpu" if device.type == "cpu" else str(device)


def device_arguments(device: str) -> dict[str, Any]:
    """TRL's arguments for training on ``device`` (``trainer_device``)."""
    resolved = trainer_device(device)
    arguments = {"use_cpu": resolved == "cpu", "bf16": supports_bf16(resolved)}
    if resolved == "cpu":  # recomputing activations only saves GPU memory; on CPU it costs time
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


def chat_agent(env_id: str) -> type:
    """The agent class that plays a saved text model on ``env_id`` (its family's material)."""
    agent = training_material(env_id).chat_agent
    if agent is None:
        raise ValueError(f"a chat agent plays saved text models on {envs_with('chat_agent')}, not {env_id!r}")
    return agent


def evaluate_model(
    model: str | Path,
    env_id: str,
    evaluation: EvalSettings,
    out_dir: Path,
    seed: int = 0,
    player: Player | None = None,
    device: str = "auto",
) -> dict[str, Any]:
    """Play the saved model (a checkpoint or LoRA adapter folder) on ``device`` on held-out
    episodes with ``player`` (default: the family's text ``llm`` agent); the cell's metrics with
    CIs, grouped names joined with "/"."""
    player = player or Player(EVAL_AGENT, chat_agent(env_id))
    config = evaluation_config(env_id, evaluation, seed, player.name)
    spec = f"{player.client}:{model}?device={device}"
    agents = {player.name: player.agent_class.from_client_spec(spec)}
    metadata = evaluate(
        out_dir,
        config,
        agents,
        progress=False,
        batch_size=evaluation.batch_size,
        env_objects=evaluation.plugin_objects(),
    )
    return flat_estimates(metadata["cells"][config.cells[0].name]["metrics"])


def evaluation_rows(
    curve: CurveLog,
    models: Sequence[tuple[str, str | Path, int]],
    env_id: str,
    evaluation: EvalSettings,
    seed: int,
    player: Player | None = None,
    device: str = "auto",
) -> dict[str, dict[str, Any]]:
    """Evaluate each (name, model folder, training step) on ``device`` and log it; the metrics by
    name."""
    results = {}
    for name, model, step in models:
        out = curve.path.parent / "evals" / name
        metrics = evaluate_model(model, env_id, evaluation, out, seed, player, device)
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
            self.curve,
            [(name, folder, step)],
            self.env_id,
            self.evaluation,
            self.seed,
            self.player,
            str(args.device),
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
    metrics = evaluation_rows(curve, models, env_id, evaluation, seed, player, trained_on(trainer))
    return {"model": str(final), "metrics": metrics, **timing}
