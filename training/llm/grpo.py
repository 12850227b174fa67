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

import importlib.util
from dataclasses import dataclass
from typing import Any

from agents.training_material import grpo_task
from training.llm.common import client_options, grpo_arguments
from training.llm.evaluation import PeriodicEvaluation, run_training
from training.llm.paired_grpo import PairedGRPOTrainer
from training.llm.run_folder import finish_curve, start_curve
from training.llm.settings import GRPOBaseSettings
from training.llm.start_model import start_folder, text_model_loader

VLLM_MODES = (None, "colocate", "server")


@dataclass(kw_only=True)
class GRPOSettings(GRPOBaseSettings):
    state_probe: str | None = None  # Hear2Act assent through T+S^: a concern-probe checkpoint
    vllm_mode: str | None = None  # None: generate with transformers
    eval_every: int = 0  # optimizer steps between held-out evaluations (0: only before and after)
    # the loss keeps the batch's completion tokens of the top q entropy only (TRL; 1.0: all):
    # a decision's tokens (which action, which tool) stay, a reply's near-certain grammar leaves
    top_entropy_quantile: float = 1.0

    TASKS = "grpo_tasks"

    def check(self) -> None:
        super().check()
        _, task = grpo_task(self.task)
        self.state_probe = None if self.state_probe is None else str(self.state_probe)
        self.env_options = task.check(self)
        self.evaluation = self.evaluation.resolved(
            task.access(self), task.eval_options(self.env_options), self.state_probe
        )
        if self.eval_every < 0:
            raise ValueError("eval_every must be >= 0")
        if not 0.0 < self.top_entropy_quantile <= 1.0:
            raise ValueError("top_entropy_quantile must be in (0, 1]")
        if self.vllm_mode not in VLLM_MODES:
            raise ValueError(f"vllm_mode must be one of {VLLM_MODES}")
        if self.paired and self.vllm_mode == "server":
            raise ValueError(
                "paired GRPO cannot use vLLM server mode (it samples a whole group from one "
                "prompt, which breaks pairing); use vllm_mode='colocate'"
            )
        if self.vllm_mode is not None and importlib.util.find_spec("vllm") is None:
            raise ValueError(
                "vllm_mode needs vLLM, which no hear-gym extra installs (its releases pin other torch and "
                "transformers versions); generate with transformers, or evaluate against a vLLM server run "
                "in its own environment (docs/bring-your-own-model.md)"
            )


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
        top_entropy_quantile=settings.top_entropy_quantile,
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
        load = text_model_loader(settings)
        start = start_folder(settings.model, settings.out, load, settings.device)  # an SFT adapter, merged
        policy = load(start)
        rows, reward = task.build(settings, end_of_turn_ids(*policy))
        client = client_options(settings, settings.device)
        periodic = PeriodicEvaluation(
            curve, settings.eval_every, env_id, settings.evaluation, settings.seed, client=client
        )
        trainer = make_trainer(settings, rows, reward, policy, callbacks=[curve, periodic])
        result = run_training(
            trainer, curve, start, env_id, settings.evaluation, settings.seed, env_timer=reward, client=client
        )
    finally:
        finish_curve(curve)
    return {**result, "rows": len(rows)}


def train_grpo(**settings: Any) -> dict[str, Any]:
    """The ``hear_gym.components`` entry point ``train_grpo``: ``train(GRPOSettings(**settings))``."""
    return train(GRPOSettings(**settings))
