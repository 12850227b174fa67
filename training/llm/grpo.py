"""GRPO on single decisions with the env's own reward, plain or paired, read top to bottom.

The tasks are the families' (each family's training material, ``agents.training_material``,
declares its ``grpo_tasks``; ``task`` names one): VoiceGate's ``voicegate`` (its items, paired
as a speaker-switch command and its switched twin; ``agents.voicegate.grpo_items``) and
Hear2Act's ``hear2act_assent`` (one transcript at an assent turn, genuine vs reluctant
acceptance, through T+S or, with ``state_probe``, T+S^; ``agents.hear2act.assent_pairs``). The
family builds the rows, its counterfactual pairs and the reward; this trainer names no family.

1. ``GRPOSettings``: the model (a checkpoint, or an SFT output to continue from), the task, plain
   or paired grouping, TRL's GRPO knobs, LoRA, the held-out evaluation.
2. The task's rows: paired, one row per pair (x+ in ``prompt``, x- in ``prompt_minus``); plain,
   the very same items as ordinary rows, so the plain control sees the paired run's items.
3. The task's reward (``agents.llm.decision_reward.DecisionReward``): the env's reward for the
   reply. A reply cut by ``max_completion_length`` before its end-of-turn token is scored as the
   empty reply; it logs the mean reward per family and the valid-format rate, and times itself
   (the environment's share of a step).
4. TRL's ``GRPOTrainer`` (``PairedGRPOTrainer`` for pairs) with ``loss_type="dapo"``; the final
   adapter or model is saved with safetensors to ``final/`` and evaluated in env loops like SFT.
   An SFT adapter given as the model is trained merged: ``training.llm.start_model`` writes it
   to the run's ``start/``, the base every adapter the run saves names.

A text model reads the transcript, and the two sides of a VoiceGate pair have the same words, so
no text model can separate a switch from its same-speaker twin; paired grouping needs a
listening model to pay off. See docs/post-training.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.training_material import grpo_task
from training.llm.common import (
    EvalSettings,
    LoraSettings,
    PeriodicEvaluation,
    check_group_batch,
    check_model_folder,
    grpo_arguments,
    nested_settings,
    run_training,
    trainer_device,
)
from training.llm.paired_grpo import PairedGRPOTrainer
from training.llm.run_folder import finish_curve, start_curve
from training.llm.start_model import load_text_model, start_folder

VLLM_MODES = (None, "colocate", "server")


@dataclass
class GRPOSettings:
    out: Path
    model: str
    task: str = "voicegate"  # a GRPO task some family's training material declares
    families: tuple[str, ...] | None = None  # the task's item families (VoiceGate's); None: its default
    env_options: dict[str, Any] = field(default_factory=dict)  # Hear2Act assent: reward, turn_cost, ...
    state_probe: str | None = None  # Hear2Act assent through T+S^: a concern-probe checkpoint
    paired: bool = False
    item_limit: int | None = None  # first N pairs or unpaired items (plain: each side a row)
    num_generations: int = 8  # K; paired: K/2 per side
    batch_size: int = 16  # completions per device and step (a multiple of K)
    max_completion_length: int = 96
    max_steps: int = 50
    learning_rate: float = 1e-5
    temperature: float = 1.0
    beta: float = 0.0  # KL weight (0: no reference model)
    vllm_mode: str | None = None  # None: generate with transformers
    lora: LoraSettings = field(default_factory=LoraSettings)
    evaluation: EvalSettings = field(default_factory=EvalSettings)
    eval_every: int = 0  # optimizer steps between held-out evaluations (0: only before and after)
    device: str = "auto"  # auto, cpu, cuda or cuda:N: where it trains (common.trainer_device)
    seed: int = 0
    wandb_project: str | None = "hear-gym"
    progress: bool = True

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.families = None if self.families is None else tuple(self.families)
        self.lora, self.evaluation = nested_settings(self.lora, self.evaluation)
        _, task = grpo_task(self.task)
        self.state_probe = None if self.state_probe is None else str(self.state_probe)
        self.env_options = task.check(self)
        self.evaluation = self.evaluation.resolved(
            task.access(self), task.eval_options(self.env_options), self.state_probe
        )
        if self.num_generations < 2 or (self.paired and self.num_generations % 2):
            raise ValueError("num_generations must be >= 2, and even for paired GRPO (K/2 per side)")
        check_group_batch(self.batch_size, self.num_generations)
        if self.eval_every < 0:
            raise ValueError("eval_every must be >= 0")
        for name in ("max_completion_length", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.vllm_mode not in VLLM_MODES:
            raise ValueError(f"vllm_mode must be one of {VLLM_MODES}")
        if self.paired and self.vllm_mode == "server":
            raise ValueError(
                "paired GRPO cannot use vLLM server mode (it samples a whole group from one "
                "prompt, which breaks pairing); use vllm_mode='colocate'"
            )
        trainer_device(self.device)  # a device this machine lacks: refused now
        self.model = check_model_folder(self.model)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "out": str(self.out)}


# -- the trainer ----------------------------------------------------------------------------------
def end_of_turn_ids(model, tokenizer) -> set[int]:
    """Every id that ends a completion: the tokenizer's EOS and the model's declared ones (as
    ``GRPOTrainer`` stops generation)."""
    declared = model.generation_config.eos_token_id
    declared = [] if declared is None else [declared] if isinstance(declared, int) else list(declared)
    return {tokenizer.eos_token_id, *declared}


def make_trainer(settings: GRPOSettings, rows: list[dict[str, Any]], reward, policy, callbacks=()):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(
        **grpo_arguments(settings, checkpoint_every=settings.eval_every),
        use_vllm=settings.vllm_mode is not None,
        vllm_mode=settings.vllm_mode or "colocate",
    )
    trainer_class = PairedGRPOTrainer if settings.paired else GRPOTrainer
    model, tokenizer = policy
    return trainer_class(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[reward],
        args=config,
        train_dataset=Dataset.from_list(rows),
        peft_config=settings.lora.peft_config(),
        callbacks=list(callbacks),
    )


def train(settings: GRPOSettings) -> dict[str, Any]:
    env_id, task = grpo_task(settings.task)
    curve = start_curve(settings.out, settings.to_json(), env_id, settings.wandb_project)
    try:
        start = start_folder(
            settings.model, settings.out, load_text_model, settings.device
        )  # an SFT adapter, merged
        policy = load_text_model(start)
        rows, reward = task.build(settings, end_of_turn_ids(*policy))
        periodic = PeriodicEvaluation(curve, settings.eval_every, env_id, settings.evaluation, settings.seed)
        trainer = make_trainer(settings, rows, reward, policy, callbacks=[curve, periodic])
        result = run_training(
            trainer, curve, start, env_id, settings.evaluation, settings.seed, env_timer=reward
        )
    finally:
        finish_curve(curve)
    return {**result, "rows": len(rows)}


def train_grpo(**settings: Any) -> dict[str, Any]:
    """The ``hear_gym.components`` entry point ``train_grpo``: ``train(GRPOSettings(**settings))``."""
    return train(GRPOSettings(**settings))
