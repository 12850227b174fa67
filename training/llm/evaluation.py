"""The held-out evaluation of a model in env loops, through the project's runner, during and after
training, and the training loop around it (``run_training``).

A saved model (checkpoint or LoRA adapter folder) is played by its family's chat agent (or the
trainer's ``Player``) through a chat client built from a spec (``agents.llm.factory``) with the
trainer's device, dtype and remote-code choice, and released when its evaluation ends, so the
models evaluated one after another never share memory. Mid-training evaluations run on the main
process while the others wait (``MainProcessWork``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from agents.training_material import envs_with, training_material
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.pipeline import evaluate
from hear_gym.stats.bootstrap import flat_estimates
from training.llm.common import EVAL_AGENT, EvalSettings, Player, trained_on
from training.llm.main_process import MainProcessWork, main_process
from training.llm.run_folder import FINAL_DIR, CurveLog


def evaluation_config(env_id: str, evaluation: EvalSettings, seed: int, agent: str = EVAL_AGENT) -> RunConfig:
    env_family = family(env_id)
    env_family.check_access(evaluation.access)
    options = dict(evaluation.env_options)
    cell_options = tuple((k, str(options.pop(k))) for k in env_family.cell_options if k in options)
    missing = [k for k in env_family.cell_options if k not in dict(cell_options)]
    if missing:
        raise ValueError(f"{env_id} evaluations name the {missing} of a cell: set them in env_options")
    if evaluation.families is None:
        episodes = env_family.item_ids(evaluation.split)
    else:
        episodes = env_family.item_ids(evaluation.split, tuple(evaluation.families))
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
    client: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play the saved model (a checkpoint or LoRA adapter folder) on held-out episodes with
    ``player`` (default: the family's text ``llm`` agent), loaded with the chat-client options
    ``client`` (``common.client_options``: device, dtype, remote code), then free it; the cell's
    metrics with CIs, grouped names joined with "/"."""
    player = player or Player(EVAL_AGENT, chat_agent(env_id))
    config = evaluation_config(env_id, evaluation, seed, player.name)
    factory = player.agent_class.from_client_spec(f"{player.client}:{model}", **(client or {}))
    try:
        metadata = evaluate(
            out_dir,
            config,
            {player.name: factory},
            progress=False,
            batch_size=evaluation.batch_size,
            env_objects=evaluation.plugin_objects(),
        )
    finally:
        factory.release()  # the model evaluated leaves memory before the next one loads
    return flat_estimates(metadata["cells"][config.cells[0].name]["metrics"])


def evaluation_rows(
    curve: CurveLog,
    models: Sequence[tuple[str, str | Path, int]],
    env_id: str,
    evaluation: EvalSettings,
    seed: int,
    player: Player | None = None,
    client: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Evaluate each (name, model folder, training step), loaded with ``client`` (``evaluate_model``),
    and log it; the metrics by name."""
    results = {}
    for name, model, step in models:
        out = curve.path.parent / "evals" / name
        metrics = evaluate_model(model, env_id, evaluation, out, seed, player, client)
        curve.write({"kind": "eval", "step": step, "checkpoint": name, "metrics": metrics})
        results[name] = metrics
    return results


class PeriodicEvaluation(TrainerCallback):
    """Every ``every`` optimizer steps (before the last), save the model being trained to
    ``checkpoints/step_N`` (a LoRA model saves its adapter) and play it on the held-out episodes,
    logged to the curve like the final evaluation. The main process does it while the others wait
    (``MainProcessWork``). ``client``: how the checkpoint loads (``common.client_options``; its
    device is the one training uses)."""

    def __init__(
        self,
        curve: CurveLog,
        every: int,
        env_id: str,
        evaluation: EvalSettings,
        seed: int,
        player: Player | None = None,
        client: dict[str, Any] | None = None,
    ) -> None:
        self.curve, self.every, self.env_id = curve, every, env_id
        self.evaluation, self.seed, self.player = evaluation, seed, player
        self.client, self.work = dict(client or {}), MainProcessWork()

    def on_train_begin(self, args, state, control, **kwargs):
        if self.every:
            self.work.start()

    def on_step_end(self, args, state, control, model=None, processing_class=None, **kwargs):
        step = int(state.global_step)
        if not self.every or step % self.every or step >= state.max_steps:
            return
        name = f"step_{step}"
        folder = self.curve.path.parent / "checkpoints" / name

        def save_and_play() -> None:
            model.save_pretrained(folder)
            processing_class.save_pretrained(folder)
            client = {**self.client, "device": trained_on(args)}
            rows = [(name, folder, step)]
            evaluation_rows(self.curve, rows, self.env_id, self.evaluation, self.seed, self.player, client)

        self.work.run(save_and_play)


def run_training(
    trainer,
    curve: CurveLog,
    base_model: str | Path,
    env_id: str,
    evaluation: EvalSettings,
    seed: int,
    player: Player | None = None,
    env_timer=None,
    client: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train, save ``final/`` (safetensors: the adapter under LoRA, else the model; and the
    tokenizer or processor), then evaluate the base model (if asked) and ``final/``, loaded with
    ``client`` on the device training used. With ``env_timer`` (anything with ``.seconds`` spent
    in the env), a ``timing`` row gives the env's share of training time. Returns the final
    folder, the metrics and the timing."""
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=curve.resume_from)
    seconds = time.perf_counter() - start
    final = curve.path.parent / FINAL_DIR
    trainer.save_model(str(final))  # the main process writes it (Trainer.save_model)
    steps = int(trainer.state.global_step)
    if not main_process():
        return {"model": str(final), "metrics": {}}
    trainer.processing_class.save_pretrained(str(final))
    free_training_memory(trainer)  # the evaluations load final/ afresh
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
    client = {**(client or {}), "device": trained_on(trainer.args)}
    metrics = evaluation_rows(curve, models, env_id, evaluation, seed, player, client)
    return {"model": str(final), "metrics": metrics, **timing}


def free_training_memory(trainer) -> None:
    """Drop the trainer's model, optimizer and their GPU memory once ``final/`` is saved, so an
    evaluation's model is never loaded beside them."""
    import gc

    import torch

    trainer.accelerator.free_memory()
    trainer.model = trainer.model_wrapped = trainer.optimizer = trainer.lr_scheduler = None
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
