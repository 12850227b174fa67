"""What the language-model trainers (``training.llm.sft``, ``training.llm.grpo``) share: LoRA defaults,
the held-out evaluation's settings, device and precision arguments, TRL's arguments and the check
of a model folder; the in-env evaluation and the training loop are ``training.llm.evaluation``,
the run folder (lock, settings, curve, resuming) ``training.llm.run_folder``.

Defaults follow VoxGate's Table 8: LoRA rank 32, alpha 64 on the attention q, k, v, o
projections. Every trainer takes a ``device`` (``agents.device``; default ``auto``) and a
``dtype`` (``precision_arguments``): by default the weights train in float32, under bfloat16
autocast on a GPU that has bfloat16 (TRL needs ``use_cpu=True`` and ``bf16=False`` said explicitly
on the CPU), and the held-out evaluations load the model on the device training used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from agents.device import DeviceError, resolve_device, supports_bf16
from agents.llm.loading import check_dtype
from hear_gym.eval.provenance import file_fingerprint
from training.llm.run_folder import TRAINER_DIR, checkpoint_arguments

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
        "trust_remote_code": settings.trust_remote_code,
        **device_arguments(settings.device, settings.dtype, settings.gradient_checkpointing),
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
        "trust_remote_code": settings.trust_remote_code,
        **device_arguments(settings.device, settings.dtype, settings.gradient_checkpointing),
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


def trained_on(args) -> str:
    """The device a trainer with these arguments trains on, as the clients' ``device`` takes it:
    a distributed CPU launch reports ``cpu:0``, which names no GPU."""
    return "cpu" if args.device.type == "cpu" else str(args.device)


def device_arguments(
    device: str, dtype: str = "auto", gradient_checkpointing: bool | None = None
) -> dict[str, Any]:
    """TRL's arguments for training on ``device`` (``trainer_device``) in ``dtype``
    (``precision_arguments``), recomputing activations where ``gradient_checkpointing`` says
    (None: on a GPU, as TRL does by default; never on the CPU, where it only costs time)."""
    resolved = trainer_device(device)
    gpu = resolved != "cpu"
    checkpointing = gpu if gradient_checkpointing is None else gradient_checkpointing
    return {
        "use_cpu": not gpu,
        **precision_arguments(resolved, dtype),
        "activation_checkpointing": checkpointing,
    }


def precision_arguments(device: str, dtype: str) -> dict[str, bool]:
    """Mixed precision for ``dtype`` on ``device`` (resolved):

    * ``auto``: float32 weights, bfloat16 autocast on a GPU that has bfloat16;
    * ``fp32``: float32 weights and arithmetic;
    * ``bf16``: the weights themselves in bfloat16 (``training_dtype``: half the memory of weights,
      gradients and optimizer state), bfloat16 autocast where the GPU has it; runs on a CPU too;
    * ``fp16``: float32 weights under float16 autocast with loss scaling: a CUDA GPU only."""
    check_dtype(dtype)
    if dtype == "fp16" and device == "cpu":
        raise ValueError(
            "dtype fp16 trains under float16 autocast, which needs a CUDA GPU; use bf16 or fp32 on a CPU"
        )
    return {"bf16": dtype in ("auto", "bf16") and supports_bf16(device), "fp16": dtype == "fp16"}


def training_dtype(dtype: str):
    """The torch dtype the trained weights load in (``precision_arguments``)."""
    import torch

    return torch.bfloat16 if check_dtype(dtype) == "bf16" else torch.float32


def model_init_kwargs(settings) -> dict[str, Any]:
    """How a trainer loads the model from its folder: ``settings.dtype``'s weights, and its own
    code only where ``settings.trust_remote_code`` says."""
    return {"dtype": training_dtype(settings.dtype), "trust_remote_code": settings.trust_remote_code}


def client_options(settings, device: str) -> dict[str, Any]:
    """The chat-client options (``agents.llm.factory``) that evaluate what ``settings`` train on
    ``device``: the same dtype and remote-code choice."""
    return {"device": device, "dtype": settings.dtype, "trust_remote_code": settings.trust_remote_code}


def check_model_folder(model: str, trust_remote_code: bool = False) -> str:
    """``model`` (a checkpoint or LoRA adapter folder, or a cached hub id) as the trainers record
    it, after checking that its config, weights and tokenizer are there and load, and that code it
    ships is trusted: a clear error now, before anything is written into the run folder, not after
    the demonstrations are built."""
    from transformers import AutoConfig, AutoTokenizer

    from agents.llm.loading import base_model_of, check_remote_code, processing_source

    base, tokenizer = base_model_of(model), processing_source(model)  # ChatClientError: not here
    check_remote_code(model, trust_remote_code)  # ChatClientError: code not trusted
    try:
        AutoConfig.from_pretrained(base, local_files_only=True, trust_remote_code=trust_remote_code)
        _local_files(base, WEIGHT_FILES, "weights")
        _local_files(tokenizer, TOKENIZER_FILES, "tokenizer")
        AutoTokenizer.from_pretrained(tokenizer, local_files_only=True, trust_remote_code=trust_remote_code)
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
