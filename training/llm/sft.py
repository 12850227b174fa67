"""Supervised fine-tuning of a chat model on expert demonstrations, read top to bottom.

1. ``SFTSettings``: the model (a local folder, a cached hub id, or an earlier run's LoRA adapter,
   merged into its base in the run's ``start/``, ``training.llm.start_model``), the env whose experts demonstrate
   (its family's training material declares them, ``agents.training_material.DemoSource``:
   VoiceGate's gold actions under T, Hear2Act's state-aware agent under T+S), LoRA
   (rank 32, alpha 64 on q/k/v/o by default), the optimizer, the held-out evaluation, and the
   source's own options (``demo_options``: VoiceGate's ``exclude_conditions``).
2. The demonstrations are built with the agents' own prompt builders and saved as
   ``demos.jsonl`` (TRL's conversational prompt-completion rows).
3. TRL's ``SFTTrainer`` trains with the loss on the completion (the assistant's reply) only;
   prompt tokens are labelled -100. The adapter (or full model) and tokenizer are saved with
   safetensors to ``final/``.
4. The untrained model and ``final/`` play the held-out episodes through the project's runner
   (the family's ``llm`` agent, greedy decoding), with the same CIs as every agent. Training
   logs and evaluations go to ``curve.jsonl`` and W&B.

Play the result anywhere with ``hear-gym eval --cell llm@ACCESS --llm-client hf:OUT/final``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from agents.training_material import DemoSource, envs_with, training_material
from training.llm.common import client_options, model_init_kwargs, sft_arguments
from training.llm.demos import write_jsonl
from training.llm.evaluation import PeriodicEvaluation, run_training
from training.llm.run_folder import finish_curve, start_curve
from training.llm.settings import SFTBaseSettings
from training.llm.start_model import start_folder, text_model_loader

DEMOS_FILE = "demos.jsonl"


@dataclass(kw_only=True)
class SFTSettings(SFTBaseSettings):
    max_length: int = 4096
    eval_every: int = 0  # optimizer steps between held-out evaluations (0: only before and after)
    # keyword options of the family's demonstration source (VoiceGate: families, exclude_conditions)
    demo_options: dict[str, Any] = field(default_factory=dict)

    DEMOS = "demos"

    def check(self) -> None:
        super().check()
        demos = demo_source(self.env_id)
        # the trained model is evaluated in the condition its experts demonstrate under
        self.evaluation = self.evaluation.resolved(demos.access, self.env_options)
        if self.eval_every < 0:
            raise ValueError("eval_every must be >= 0")
        if self.max_length < 1:
            raise ValueError("max_length must be >= 1")
        if "split" in self.env_options:
            raise ValueError("demonstrations come from the 'train' split; do not set split")
        known = demo_option_names(demos)
        if unknown := sorted(set(self.demo_options) - known):
            raise ValueError(f"demo_options: {self.env_id} takes {sorted(known) or 'none'}, not {unknown}")


# -- 2. demonstrations -------------------------------------------------------------------------
def demo_source(env_id: str) -> DemoSource:
    """The demonstration source ``env_id``'s family declares in its training material."""
    source = training_material(env_id).demos
    if source is None:
        raise ValueError(f"SFT demonstrations exist for {envs_with('demos')}, not {env_id!r}")
    return source


def demo_option_names(source: DemoSource) -> set[str]:
    """The options a source's builder names besides the ones the trainer sets (its ``**`` catch-all
    holds env options, not demonstration options)."""
    parameters = inspect.signature(source.build).parameters.values()
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named - {"split", "access", "limit", "seed"}


def build_demos(settings: SFTSettings) -> list[dict[str, Any]]:
    source = demo_source(settings.env_id)
    return source.build(
        "train",
        access=source.access,
        limit=settings.demo_limit,
        seed=settings.seed,
        **settings.demo_options,
        **settings.env_options,
    )


# -- 3. the trainer ----------------------------------------------------------------------------
def make_trainer(settings: SFTSettings, demos: list[dict[str, Any]], model: str, callbacks=()):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    columns = [{"prompt": d["prompt"], "completion": d["completion"]} for d in demos]
    config = SFTConfig(
        **sft_arguments(settings, checkpoint_every=settings.eval_every),
        max_length=settings.max_length,
        completion_only_loss=True,  # the loss sees the assistant's reply, never the prompt
        model_init_kwargs=model_init_kwargs(settings),  # TRL loads the model from its folder
    )
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(columns),
        peft_config=settings.lora.peft_config(),
        callbacks=list(callbacks),
    )


# -- the whole job -----------------------------------------------------------------------------
def train(settings: SFTSettings) -> dict[str, Any]:
    """Build demonstrations, fine-tune, evaluate; returns the saved model folder and metrics."""
    curve = start_curve(settings.out, settings.to_json(), settings.env_id, settings.wandb_project)
    try:
        demos = build_demos(settings)
        write_jsonl(demos, settings.out / DEMOS_FILE)
        client = client_options(settings, settings.device)
        periodic = PeriodicEvaluation(
            curve, settings.eval_every, settings.env_id, settings.evaluation, settings.seed, client=client
        )
        start = start_folder(
            settings.model, settings.out, text_model_loader(settings), settings.device
        )  # an adapter, merged
        trainer = make_trainer(settings, demos, start, callbacks=[curve, periodic])
        result = run_training(
            trainer, curve, start, settings.env_id, settings.evaluation, settings.seed, client=client
        )
    finally:
        finish_curve(curve)
    return {**result, "demos": len(demos)}


def train_sft(**settings: Any) -> dict[str, Any]:
    """The ``hear_gym.components`` entry point ``train_sft``: ``train(SFTSettings(**settings))``."""
    return train(SFTSettings(**settings))
