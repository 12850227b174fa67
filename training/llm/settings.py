"""The settings the language-model trainers share, each field declared once.

* ``TrainerSettings`` (every trainer): ``RunSettings``' run folder, seed, W&B and progress, then
  the model, LoRA, the held-out evaluation, the device and how the model loads: ``dtype``
  (``training.llm.common.precision_arguments``), ``gradient_checkpointing`` and
  ``trust_remote_code``. The device, gradient checkpointing and trusting remote code only say
  where and how a run computes, so a run folder resumes whatever they are now
  (``training.llm.run_folder.RUN_TIME``; folders written before they existed included).
* ``SFTBaseSettings`` (``training.llm.sft``, ``training.llm.audio_sft``): the env whose family
  demonstrates, its options, the demonstration count and the optimizer.
* ``GRPOBaseSettings`` (``training.llm.grpo``, ``training.llm.audio_grpo``): the task, its item
  families and options, GRPO's group, token cap and sampling, the optimizer.

The multi-turn trainer (``training.llm.dialogue_grpo``) extends ``TrainerSettings`` alone: its
groups, token cap and steps count whole dialogues, with defaults of their own.

An env or task left unset is the family default its training material declares
(``agents.training_material.default_env``): ``training/`` names no family.

Checks run in ``__post_init__``, before anything is written: each trainer's own in ``check``,
then the device, then the model folder last (it loads the model's config and tokenizer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from agents.training_material import default_env, default_task
from training.llm.common import (
    EvalSettings,
    LoraSettings,
    check_group_batch,
    check_model_folder,
    device_arguments,
    nested_settings,
)
from training.run_settings import RunSettings


@dataclass(kw_only=True)
class TrainerSettings(RunSettings):
    # a checkpoint or LoRA adapter folder, or a cached hub id (``check_model_folder``)
    model: str
    lora: LoraSettings = field(default_factory=LoraSettings)
    evaluation: EvalSettings = field(default_factory=EvalSettings)
    device: str = "auto"  # auto, cpu, cuda or cuda:N: where it trains (common.trainer_device)
    dtype: str = "auto"  # auto, bf16, fp16 or fp32: weights and mixed precision (common.precision_arguments)
    gradient_checkpointing: bool | None = None  # None: on a GPU (TRL's default), off on the CPU
    trust_remote_code: bool = False  # a checkpoint that ships code loads only with it

    def __post_init__(self) -> None:
        super().__post_init__()
        self.lora, self.evaluation = nested_settings(self.lora, self.evaluation)
        self.check()
        device_arguments(self.device, self.dtype)  # a device this machine lacks, fp16 on a CPU: refused now
        self.model = self.checked_model()

    def check(self) -> None:
        """The trainer's own checks and resolutions (one-line ``ValueError``s)."""

    def checked_model(self) -> Any:
        return check_model_folder(self.model, self.trust_remote_code)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "model": str(self.model)}


@dataclass(kw_only=True)
class SFTBaseSettings(TrainerSettings):
    # an env whose family declares demonstrations of the trainer's kind (``DEMOS``); None: the
    # family that declares itself their default
    env_id: str | None = None
    env_options: dict[str, Any] = field(default_factory=dict)  # gym.make kwargs (Hear2Act: feedback)
    demo_limit: int | None = None  # the family's source: N items (seeded) or N dialogues
    epochs: float = 3.0
    max_steps: int | None = None  # stop after N optimizer steps (before the epochs end)
    learning_rate: float = 1e-4
    batch_size: int = 8
    gradient_accumulation: int = 1

    DEMOS: ClassVar[str]  # the training-material field of the demonstrations: demos, audio_demos

    def check(self) -> None:
        if self.env_id is None:
            self.env_id = default_env(self.DEMOS)
        if self.epochs <= 0 or self.learning_rate <= 0:
            raise ValueError("epochs and learning_rate must be > 0")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("max_steps must be >= 1 (or None: train for the epochs)")
        if self.demo_limit is not None and self.demo_limit < 1:
            raise ValueError("demo_limit must be >= 1 (or None: every demonstration)")
        for name in ("batch_size", "gradient_accumulation"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")


@dataclass(kw_only=True)
class GRPOBaseSettings(TrainerSettings):
    # a task some family's training material declares (``TASKS``); None: the first task of the
    # family that declares itself their default
    task: str | None = None
    families: tuple[str, ...] | None = None  # the task's item families; None: its default
    env_options: dict[str, Any] = field(default_factory=dict)  # the task's (Hear2Act: reward, turn_cost)
    paired: bool = False
    item_limit: int | None = None  # first N pairs or unpaired items (plain: each side a row)
    num_generations: int = 8  # K; paired: K/2 per side
    batch_size: int = 16  # completions per device and step (a multiple of K)
    max_completion_length: int = 96
    max_steps: int = 50
    learning_rate: float = 1e-5
    temperature: float = 1.0
    beta: float = 0.0  # KL weight (0: no reference model)

    TASKS: ClassVar[str]  # the training-material field of the tasks: grpo_tasks, audio_grpo_tasks

    def check(self) -> None:
        if self.task is None:
            self.task = default_task(self.TASKS)
        self.families = None if self.families is None else tuple(self.families)
        if self.num_generations < 2 or (self.paired and self.num_generations % 2):
            raise ValueError("num_generations must be >= 2, and even for paired GRPO (K/2 per side)")
        check_group_batch(self.batch_size, self.num_generations)
        for name in ("max_completion_length", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.learning_rate <= 0 or self.temperature <= 0:
            raise ValueError("learning_rate and temperature must be > 0")
