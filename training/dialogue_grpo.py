"""Multi-turn GRPO on whole Hear2Act dialogues with TRL, read top to bottom.

1. ``DialogueGRPOSettings``: the model folder (local; nothing is downloaded), the env options,
   how many train scenarios, GRPO's group size and token cap, the optimizer, LoRA, the seed,
   where to write.
2. The dataset: ``n_scenarios`` train scenarios spread evenly over the split (so over domains);
   each row's ``prompt`` is the conversational first turn (``dialogue_messages`` of the reset
   observation).
3. ``GRPOTrainer(rollout_func=DialogueRollout(...))`` (``training.dialogue_rollout``): every
   prompt's group of ``num_generations`` dialogues is played to its end against the user engine,
   as one token sequence each; ``env_mask`` keeps the user's turns out of the loss. The reward
   is the env's episode return; a dialogue cut by ``max_completion_length`` is scored by
   ``CUT_RULE``. Loss ``dapo``, on CPU in float32 (``use_cpu=True``, ``bf16=False``).
4. ``CurveLog`` (a ``TrainerCallback``): one ``curve.jsonl`` row per optimizer step (mean
   reward, cut fraction, invalid-action rate, success, turns, tokens, loss), also to W&B
   (offline unless ``WANDB_API_KEY`` is set; never asks to log in) when ``wandb_project`` is set.
5. The final model (or LoRA adapter) in safetensors under ``out/final``, with the tokenizer;
   ``settings.json`` holds the settings, the cut rule and the provenance.

The same settings and seed give the same curve (the seed drives torch, the sampler and the
envs' resets).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from hear_gym.core.registry import family
from hear_gym.envs.hear2act.env import REWARDS
from hear_gym.eval.provenance import provenance
from training.dialogue_rollout import CUT_RULE, SET_BY_THE_ROLLOUT, DialogueRollout, episode_return_reward

ENV_ID = "hear_gym/Hear2Act-v0"
CURVE_FILE = "curve.jsonl"
SETTINGS_FILE = "settings.json"
FINAL_DIR = "final"


# -- 1. settings -------------------------------------------------------------------------------
@dataclass
class DialogueGRPOSettings:
    out: Path
    model: Path  # a local transformers causal LM folder with a chat template
    env_options: dict[str, Any] = field(
        default_factory=lambda: {"feedback": "explicit", "reward": "success", "turn_cost": 0.0}
    )  # Hear2ActEnv kwargs: feedback, reward, turn_cost, max_turns, invalid_action_penalty, patience
    n_scenarios: int = 32  # train scenarios in the dataset
    scenarios_per_step: int = 2  # prompts per optimizer step; each played num_generations times
    num_generations: int = 4
    max_completion_length: int = 1024  # tokens of the WHOLE dialogue after the prompt: model + user
    max_steps: int = 100
    learning_rate: float = 1e-5
    temperature: float = 1.0
    seed: int = 0
    lora: bool = True
    lora_rank: int = 32
    lora_alpha: int = 64
    lora_targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    wandb_project: str | None = "hear-gym"  # None: no W&B

    def __post_init__(self) -> None:
        self.out, self.model = Path(self.out), Path(self.model)
        self.lora_targets = tuple(self.lora_targets)
        if not (self.model / "config.json").is_file():
            raise ValueError(
                f"model must be a local model folder (with config.json); got {str(self.model)!r}"
            )
        options = self.env_options
        fixed = [k for k in SET_BY_THE_ROLLOUT if k in options]
        if fixed:
            raise ValueError(
                f"env_options must not set {fixed}: dialogues are played under T with text actions"
            )
        if "feedback" not in options:
            raise ValueError("env_options must name the feedback realization ('explicit' or 'prosody')")
        if options.get("reward", "success") not in REWARDS:
            raise ValueError(f"env_options['reward'] must be one of {sorted(REWARDS)}")
        for name in ("n_scenarios", "scenarios_per_step", "max_completion_length", "max_steps", "lora_rank"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an int >= 1, got {getattr(self, name)!r}")
        if not isinstance(self.num_generations, int) or self.num_generations < 2:
            raise ValueError("num_generations must be an int >= 2 (GRPO compares the dialogues of a group)")
        available = len(family(ENV_ID).episode_ids("train"))
        if self.n_scenarios > available:
            raise ValueError(f"n_scenarios must be <= {available} (the train split)")
        if self.learning_rate <= 0 or self.temperature <= 0:
            raise ValueError("learning_rate and temperature must be > 0")

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "out": str(self.out),
            "model": str(self.model),
            "lora_targets": list(self.lora_targets),
        }


# -- 2. the dataset's scenarios ------------------------------------------------------------------
def train_scenarios(n: int) -> list[str]:
    """``n`` train scenario ids spread evenly over the split (the split is ordered by domain)."""
    ids = family(ENV_ID).episode_ids("train")
    return [ids[i * len(ids) // n] for i in range(n)]


# -- 3. the trainer --------------------------------------------------------------------------------
def grpo_config(settings: DialogueGRPOSettings, report_to: list[str]):
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(settings.out / "trainer"),
        use_cpu=True,
        bf16=False,
        loss_type="dapo",
        report_to=report_to,
        per_device_train_batch_size=settings.scenarios_per_step * settings.num_generations,
        num_generations=settings.num_generations,
        max_completion_length=settings.max_completion_length,
        max_steps=settings.max_steps,
        learning_rate=settings.learning_rate,
        temperature=settings.temperature,
        seed=settings.seed,
        data_seed=settings.seed,
        logging_steps=1,
        save_strategy="no",
        disable_tqdm=True,
        run_name=settings.out.name,
    )


def lora_config(settings: DialogueGRPOSettings):
    if not settings.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=settings.lora_rank,
        lora_alpha=settings.lora_alpha,
        target_modules=list(settings.lora_targets),
        lora_dropout=0.0,
        task_type="CAUSAL_LM",
    )


def build_trainer(settings: DialogueGRPOSettings, rollout: DialogueRollout, report_to=(), callbacks=()):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
    from trl import GRPOTrainer

    set_seed(settings.seed)  # before the model and LoRA weights exist
    tokenizer = AutoTokenizer.from_pretrained(settings.model)
    if tokenizer.chat_template is None:
        raise ValueError(f"{settings.model} has no chat template; dialogues need one")
    model = AutoModelForCausalLM.from_pretrained(settings.model, dtype=torch.float32)
    return GRPOTrainer(
        model=model,
        reward_funcs=[episode_return_reward],
        args=grpo_config(settings, list(report_to)),
        train_dataset=rollout.dataset(),
        processing_class=tokenizer,
        peft_config=lora_config(settings),
        rollout_func=rollout,
        callbacks=list(callbacks),
    )


# -- 4. the curve ----------------------------------------------------------------------------------
class CurveLog(TrainerCallback):
    """One row per logged optimizer step: the rollout statistics of the dialogues played since the
    last row (``DialogueRollout.history``) and the step's loss; to ``curve.jsonl`` and W&B."""

    def __init__(self, rollout: DialogueRollout, path: Path, wandb_run=None) -> None:
        self.rollout, self.path, self.wandb_run = rollout, path, wandb_run
        self.seen = 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" not in logs:  # the end-of-training summary
            return
        calls, self.seen = self.rollout.history[self.seen :], len(self.rollout.history)
        if not calls:
            return
        n = sum(c["dialogues"] for c in calls)
        row: dict[str, Any] = {"step": int(state.global_step), "dialogues": n}
        for key in calls[0]:
            if key != "dialogues":
                row[key] = sum(c[key] * c["dialogues"] for c in calls) / n
        row["loss"] = float(logs["loss"])
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if self.wandb_run is not None:
            scalars = {f"dialogue/{k}": v for k, v in row.items() if k != "step"}
            self.wandb_run.log({**scalars, "train/global_step": row["step"]})


# -- 5. the whole job -------------------------------------------------------------------------------
def _wandb_run(settings: DialogueGRPOSettings):
    if settings.wandb_project is None:
        return None
    from hear_gym.eval.wandb_log import start_run

    # TRL's W&B callback logs into this run (it only starts one when none is active).
    return start_run(
        {"settings": settings.to_json(), "provenance": provenance(ENV_ID)},
        settings.out,
        settings.wandb_project,
    )


def train(settings: DialogueGRPOSettings) -> dict[str, Any]:
    """Train; returns the final model folder, the curve's path and its last row. Never writes
    over an earlier run: the out folder must not hold one."""
    curve = settings.out / CURVE_FILE
    if curve.exists() or (settings.out / FINAL_DIR).exists():
        raise FileExistsError(f"{settings.out} already holds a training run; choose a new folder")
    settings.out.mkdir(parents=True, exist_ok=True)
    record = {"settings": settings.to_json(), "cut_rule": CUT_RULE, "provenance": provenance(ENV_ID)}
    (settings.out / SETTINGS_FILE).write_text(json.dumps(record, indent=2), encoding="utf-8")
    rollout = DialogueRollout(
        train_scenarios(settings.n_scenarios), settings.env_options, reset_seed=settings.seed
    )
    run = _wandb_run(settings)
    try:
        trainer = build_trainer(
            settings,
            rollout,
            report_to=["wandb"] if run is not None else [],
            callbacks=[CurveLog(rollout, curve, run)],
        )
        trainer.train()
        final = settings.out / FINAL_DIR
        trainer.save_model(str(final))  # safetensors: the adapter under LoRA, else the whole model
    finally:
        if run is not None:
            run.finish()
    rows = [json.loads(line) for line in curve.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"final": str(final), "curve": str(curve), "last": rows[-1] if rows else None}


def train_dialogue_grpo(**settings: Any) -> dict[str, Any]:
    """``train(DialogueGRPOSettings(**settings))``."""
    return train(DialogueGRPOSettings(**settings))
