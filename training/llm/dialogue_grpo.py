"""Multi-turn GRPO on whole dialogues with TRL, read top to bottom.

The dialogues are a family's: its training material declares ``dialogue_tasks``
(``agents.training_material.DialogueTask``; ``task`` names one). Hear2Act's
``hear2act_dialogue`` (``agents.hear2act.dialogue_task``) plays recommendation dialogues under T
against the user engine; this trainer names no family.

Two interfaces (``interface``):

* ``"tools"`` (default): TRL's ``environment_factory`` (``training.llm.dialogue_tools``,
  ``hear_gym.integrations.trl``). The model acts through the family's named tools, the user's
  answers come back as tool results (out of the loss), the reward is the env return, and the
  held-out evaluation plays test scenarios through the same factory. Needs a chat template TRL
  can parse tool calls under (Qwen2.5/3, Llama 3.1/3.2, ...).
* ``"text"``: the paper's protocol, kept on TRL's ``rollout_func`` (``DialogueRollout``) because
  the factory cannot express it: the model writes each action as a tagged P6a reply (not a tool
  call; TRL ends a rollout at the first reply without one), the user's turns are ``user``
  messages of one append-only chat (TRL's are ``tool`` messages), a dialogue the token cap cuts
  gets the task's cut rule (the factory sees an unfinished episode only), and the trained model
  is evaluated as the paper's ``llm_dialogue@T`` agent through the runner. Steps 3-5 below are
  this interface's.

1. ``DialogueGRPOSettings``: the model folder (local; nothing is downloaded), the task and its env
   options, how many train scenarios, GRPO's group size and token cap, the optimizer, LoRA, the seed,
   where to write.
2. The dataset: ``n_scenarios`` train scenarios spread evenly over the split (so over domains);
   each row's ``prompt`` is the conversational first turn (the task's ``messages`` of the reset
   observation).
3. ``GRPOTrainer(rollout_func=DialogueRollout(...))`` (``training.llm.dialogue_rollout``): every
   prompt's group of ``num_generations`` dialogues is played to its end against the env,
   as one token sequence each; ``env_mask`` keeps the user's turns out of the loss. The reward
   is the env's episode return; a dialogue cut by ``max_completion_length`` is scored by
   the task's cut rule. Loss ``dapo``; on CPU in float32 where there is no GPU. LoRA and the held-out
   evaluation are ``training.llm.common``'s, shared with the SFT and VoiceGate GRPO trainers.
4. ``DialogueCurveLog``: one ``curve.jsonl`` row per optimizer step (mean reward, cut fraction,
   invalid-action rate, success, turns, tokens, loss), also to W&B (offline unless
   ``WANDB_API_KEY`` is set; never asks to log in) when ``wandb_project`` is set.
5. The final model (or LoRA adapter) in safetensors under ``out/final``, with the tokenizer;
   ``settings.json`` holds the settings, the cut rule and the provenance. The final model then
   plays held-out scenarios with the task's agent (Hear2Act: ``llm_dialogue@T``) through the runner.

The same settings and seed give the same curve (the seed drives torch, the sampler and the
envs' resets).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.training_material import default_task, dialogue_task
from hear_gym.core.registry import family
from training.llm.common import Player, client_options, device_arguments, trained_on, training_dtype
from training.llm.dialogue_rollout import DialogueRollout, episode_return_reward
from training.llm.dialogue_tools import EpisodeHistory, ToolsCurveLog, evaluate_tools, tools_dataset
from training.llm.evaluation import evaluation_rows
from training.llm.heldout import evaluation_path
from training.llm.run_folder import (
    CURVE_FILE,
    FINAL_DIR,
    CurveLog,
    finish_curve,
    main_process,
    read_curve,
    start_curve,
)
from training.llm.settings import TrainerSettings

INTERFACES = ("tools", "text")


# -- 1. settings -------------------------------------------------------------------------------
@dataclass(kw_only=True)
class DialogueGRPOSettings(TrainerSettings):
    """``TrainerSettings`` (here ``model`` is a local transformers causal LM folder with a chat
    template, kept as a Path, and ``evaluation`` may be None: no evaluation) and the dialogue
    task's knobs; groups, the token cap and steps count whole dialogues."""

    # a dialogue task some family's training material declares; None: the first task of the
    # family that declares itself the dialogue default
    task: str | None = None
    # the env's kwargs (Hear2Act: feedback, reward, turn_cost, max_turns, invalid_action_penalty,
    # patience); None: the task's defaults
    env_options: dict[str, Any] | None = None
    n_scenarios: int = 32  # train scenarios in the dataset
    scenarios_per_step: int = 2  # prompts per optimizer step; each played num_generations times
    num_generations: int = 4
    max_completion_length: int = 1024  # tokens of the WHOLE dialogue after the prompt: model + user
    max_steps: int = 100
    learning_rate: float = 1e-5
    temperature: float = 1.0
    interface: str = "tools"  # "tools": TRL's environment_factory; "text": P6a replies (rollout_func)
    max_tool_calls: int = 32  # tools: TRL's max_tool_calling_iterations (calls after the first reply)

    def check(self) -> None:
        if self.task is None:
            self.task = default_task("dialogue_tasks")
        env_id, task = dialogue_task(self.task)
        self.env_options = dict(task.default_options if self.env_options is None else self.env_options)
        if self.evaluation is not None:
            self.evaluation = self.evaluation.resolved(task.access, self.env_options)
        task.check_options(self.env_options)
        for name in ("n_scenarios", "scenarios_per_step", "max_completion_length", "max_steps"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an int >= 1, got {getattr(self, name)!r}")
        if not isinstance(self.num_generations, int) or self.num_generations < 2:
            raise ValueError("num_generations must be an int >= 2 (GRPO compares the dialogues of a group)")
        available = len(family(env_id).item_ids("train"))
        if self.n_scenarios > available:
            raise ValueError(f"n_scenarios must be <= {available} (the train split)")
        if self.interface not in INTERFACES:
            raise ValueError(f"interface must be one of {INTERFACES}, got {self.interface!r}")
        if not isinstance(self.max_tool_calls, int) or self.max_tool_calls < 1:
            raise ValueError(f"max_tool_calls must be an int >= 1, got {self.max_tool_calls!r}")
        if self.learning_rate <= 0 or self.temperature <= 0:
            raise ValueError("learning_rate and temperature must be > 0")

    def checked_model(self) -> Path:
        model = Path(self.model)
        if not (model / "config.json").is_file():
            raise ValueError(f"model must be a local model folder (with config.json); got {str(model)!r}")
        return model


# -- 2. the dataset's scenarios ------------------------------------------------------------------
def train_scenarios(env_id: str, n: int) -> list[str]:
    """``n`` train scenario ids spread evenly over the split (the split is ordered by domain)."""
    ids = family(env_id).item_ids("train")
    return [ids[i * len(ids) // n] for i in range(n)]


# -- 3. the trainer --------------------------------------------------------------------------------
def grpo_config(settings: DialogueGRPOSettings):
    from trl import GRPOConfig

    tools = (
        {
            "max_tool_calling_iterations": settings.max_tool_calls,
            "per_device_eval_batch_size": settings.num_generations,
        }
        if settings.interface == "tools"
        else {}
    )
    return GRPOConfig(
        **tools,
        output_dir=str(settings.out / "trainer"),
        loss_type="dapo",
        report_to=[],  # DialogueCurveLog writes W&B, with the settings and provenance
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
        disable_tqdm=not settings.progress,
        run_name=settings.out.name,
        trust_remote_code=settings.trust_remote_code,
        **device_arguments(settings.device, settings.dtype, settings.gradient_checkpointing),
    )


def build_trainer(
    settings: DialogueGRPOSettings, rollout: DialogueRollout | None = None, callbacks=(), **tools
):
    """The text interface's trainer (``rollout``), or the tools interface's (``tools``: the
    ``environment_factory`` class and the ``train_dataset``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
    from trl import GRPOTrainer

    set_seed(settings.seed)  # before the model and LoRA weights exist
    trust = settings.trust_remote_code
    tokenizer = AutoTokenizer.from_pretrained(settings.model, trust_remote_code=trust)
    if tokenizer.chat_template is None:
        raise ValueError(f"{settings.model} has no chat template; dialogues need one")
    model = AutoModelForCausalLM.from_pretrained(
        settings.model, dtype=training_dtype(settings.dtype), trust_remote_code=trust
    )
    if rollout is not None:
        tools = {
            "reward_funcs": [episode_return_reward],
            "train_dataset": rollout.dataset(),
            "rollout_func": rollout,
        }
    return GRPOTrainer(
        model=model,
        args=grpo_config(settings),
        processing_class=tokenizer,
        peft_config=settings.lora.peft_config(),
        callbacks=list(callbacks),
        **tools,
    )


# -- 4. the curve ----------------------------------------------------------------------------------
class DialogueCurveLog(CurveLog):
    """One row per logged optimizer step: the rollout statistics of the dialogues played since the
    last row (``DialogueRollout.history``) and the step's loss; to ``curve.jsonl`` and W&B."""

    def __init__(self, rollout: DialogueRollout, out: Path, wandb_run=None, writes: bool = True) -> None:
        super().__init__(out, wandb_run, writes)
        self.rollout, self.seen = rollout, 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" not in logs:  # the end-of-training summary
            return
        calls, self.seen = self.rollout.history[self.seen :], len(self.rollout.history)
        if not calls:
            return
        n = sum(c["dialogues"] for c in calls)
        row: dict[str, Any] = {"kind": "train", "step": int(state.global_step), "dialogues": n}
        for key in calls[0]:
            if key != "dialogues":
                row[key] = float(sum(c[key] * c["dialogues"] for c in calls) / n)
        row["loss"] = float(logs["loss"])
        self.write(row)


# -- 5. the whole job -------------------------------------------------------------------------------
def train(settings: DialogueGRPOSettings) -> dict[str, Any]:
    """Train, then play the final model on held-out scenarios; returns the final model folder,
    the curve's path, its last training row and the evaluation. Never writes over an earlier
    run: the out folder must not hold one."""
    env_id, task = dialogue_task(settings.task)
    record = {**settings.to_json(), "cut_rule": task.cut_rule if settings.interface == "text" else PLAYED_OUT}
    curve = start_curve(
        settings.out, record, env_id, settings.wandb_project, final_evaluated=settings.evaluation is not None
    )
    if settings.interface == "tools":
        return train_with_tools(settings, env_id, task.access, curve)
    rollout = DialogueRollout(
        task, train_scenarios(env_id, settings.n_scenarios), settings.env_options, reset_seed=settings.seed
    )
    log = DialogueCurveLog(rollout, settings.out, curve.wandb_run, curve.writes)
    try:
        trainer = build_trainer(settings, rollout, callbacks=[log])
        trainer.train(resume_from_checkpoint=curve.resume_from)  # none: no checkpoints, starts over
        final = settings.out / FINAL_DIR
        trainer.save_model(str(final))  # safetensors: the adapter under LoRA, else the whole model
        metrics = {}
        if main_process():
            trainer.processing_class.save_pretrained(str(final))
        if settings.evaluation is not None and main_process():
            models = [("final", final, int(trainer.state.global_step))]
            if settings.evaluation.base:
                models.insert(0, ("base", settings.model, 0))
            client = client_options(settings, trained_on(trainer.args))
            player = Player(task.player, task.agent)
            metrics = evaluation_rows(log, models, env_id, settings.evaluation, settings.seed, player, client)
    finally:
        finish_curve(curve)
    rows = [r for r in read_curve(settings.out) if r["kind"] == "train"]
    return {
        "final": str(final),
        "model": str(final),
        "curve": str(settings.out / CURVE_FILE),
        "last": rows[-1] if rows else None,
        "metrics": metrics,
    }


PLAYED_OUT = (
    "a dialogue the model leaves unfinished (no further tool call, or a cap stopped it) is played out "
    "by the env with malformed replies until it ends (hear_gym.integrations.trl)"
)


def train_with_tools(settings: DialogueGRPOSettings, env_id: str, access: str, curve) -> dict[str, Any]:
    """The tools interface (``training.llm.dialogue_tools``): train through the factory, then
    evaluate the base (with ``evaluation.base``) and final model on held-out scenarios."""
    history = EpisodeHistory()
    log = ToolsCurveLog(history, settings.out, curve.wandb_run, curve.writes)
    environment = history.environment_class(env_id, access, settings.env_options)
    scenarios = train_scenarios(env_id, settings.n_scenarios)
    metrics: dict[str, Any] = {}
    try:
        trainer = build_trainer(
            settings,
            callbacks=[log],
            environment_factory=environment,
            train_dataset=tools_dataset(env_id, scenarios, settings.seed),
        )
        held_out = None
        if settings.evaluation is not None:
            ids = family(env_id).item_ids(settings.evaluation.split)
            held_out = list(ids[: settings.evaluation.limit])
        if held_out and settings.evaluation.base:
            metrics["base"] = evaluate_tools(
                trainer, history, env_id, held_out, settings.seed, evaluation_path(settings.out, "base")
            )
            log.write({"kind": "eval", "step": 0, "checkpoint": "base", "metrics": metrics["base"]})
        trainer.train(resume_from_checkpoint=curve.resume_from)
        final = settings.out / FINAL_DIR
        trainer.save_model(str(final))
        if main_process():
            trainer.processing_class.save_pretrained(str(final))
        if held_out:
            metrics["final"] = evaluate_tools(
                trainer, history, env_id, held_out, settings.seed, evaluation_path(settings.out, "final")
            )
            step = int(trainer.state.global_step)
            log.write({"kind": "eval", "step": step, "checkpoint": "final", "metrics": metrics["final"]})
    finally:
        finish_curve(curve)
    rows = [r for r in read_curve(settings.out) if r["kind"] == "train"]
    return {
        "final": str(final),
        "model": str(final),
        "curve": str(settings.out / CURVE_FILE),
        "last": rows[-1] if rows else None,
        "metrics": metrics,
    }


def train_dialogue_grpo(**settings: Any) -> dict[str, Any]:
    """``train(DialogueGRPOSettings(**settings))``."""
    return train(DialogueGRPOSettings(**settings))
