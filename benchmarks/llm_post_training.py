"""Post-training a chat model on CPU with the tiny offline model (``training.tiny_model``): SFT on
expert demonstrations, then GRPO on the env reward, plain and paired. Two studies:

* ``voicegate``: SFT on VoiceGate demonstrations (gold actions), GRPO on VoiceGate items. Every
  model plays the same held-out items (access T, greedy decoding) through the runner, so its
  switch mute, same-speaker and text-only tool selection, false execution and malformed rate carry
  item-group bootstrap CIs.
* ``hear2act``: SFT on Hear2Act demonstrations (``state_aware@T+S`` under prosody feedback), GRPO
  on assent pairs through T+S (the continuation reward). Every model plays the same held-out
  dialogues as ``llm@T+S``: 1st%, premature closure, invalid replies, scenario bootstrap CIs.

The GRPO runs also time the environment's share of a training step (the reward calls, which step
the env). Writes benchmarks/out/llm_post_training/<study>/summary.json (and every run folder).

    python benchmarks/llm_post_training.py [--study voicegate|hear2act] [--demos N]
        [--sft-epochs E] [--grpo-steps S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hear_gym.core.tables import percent_ci
from training.llm.grpo import train_grpo
from training.llm.sft import train_sft
from training.tiny_model import build_tiny_causal_lm

OUT = Path(__file__).parent / "out" / "llm_post_training"


@dataclass(frozen=True)
class Study:
    """What SFT learns from, what GRPO trains on, and what the evaluation reports."""

    sft: dict[str, Any]  # train_sft settings besides the model and its budget
    grpo: dict[str, Any]  # train_grpo settings besides the model and its budget
    evaluation: dict[str, Any]
    metrics: tuple[str, ...]
    title: str


HEAR2ACT_OPTIONS = {"feedback": "prosody", "reward": "success", "turn_cost": 0.05}
STUDIES = {
    "voicegate": Study(
        sft={"env_id": "hear_gym/VoiceGate-v0"},
        grpo={"task": "voicegate", "families": ("speaker_switch", "self_talk")},
        evaluation={"split": "test", "families": ("speaker_switch", "self_talk"), "batch_size": 16},
        metrics=("malformed", "switch_mute", "same_speaker_tool", "text_only_tool", "false_execution"),
        title="VoiceGate held-out (speaker-switch + self-talk), tiny model on CPU, % [95% CI]",
    ),
    "hear2act": Study(
        sft={"env_id": "hear_gym/Hear2Act-v0", "env_options": {"feedback": "prosody"}},
        grpo={"task": "hear2act_assent", "env_options": {"reward": "success", "turn_cost": 0.05}},
        evaluation={"split": "test", "batch_size": 16, "env_options": HEAR2ACT_OPTIONS},
        metrics=("1st%", "premature closure%", "invalid share", "dialogue length"),
        title="Hear2Act held-out dialogues as llm@T+S (prosody), tiny model on CPU [95% CI]",
    ),
}


def cell(metrics: dict[str, Any], name: str) -> str:
    estimate = metrics.get(name)
    if name == "dialogue length" and estimate:
        return f"{estimate['point']:.1f} [{estimate['low']:.1f}, {estimate['high']:.1f}]"
    return percent_ci(estimate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=sorted(STUDIES), default="voicegate")
    parser.add_argument(
        "--demos",
        type=int,
        default=480,
        help="VoiceGate: demonstrations (seeded sample); Hear2Act: dialogues",
    )
    parser.add_argument("--sft-epochs", type=float, default=2.0)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--grpo-steps", type=int, default=10)
    parser.add_argument("--eval-limit", type=int, default=None, help="first N held-out items")
    args = parser.parse_args()
    os.environ.setdefault("WANDB_MODE", "offline")
    study, out = STUDIES[args.study], OUT / args.study
    shutil.rmtree(out, ignore_errors=True)
    model = build_tiny_causal_lm(out / "tiny_model")
    evaluation = {**study.evaluation, "limit": args.eval_limit}
    # The tiny model is random: LoRA on its attention alone cannot teach it a grammar, so the
    # benchmark fine-tunes all weights (LoRA is the default for real models).
    sft = train_sft(
        **study.sft,
        out=out / "sft",
        model=str(model),
        demo_limit=args.demos,
        epochs=args.sft_epochs,
        learning_rate=args.sft_lr,
        batch_size=8,
        lora={"enabled": False},
        evaluation={**evaluation, "base": True},
        progress=False,
    )
    rows = {"untrained": sft["metrics"]["base"], "SFT": sft["metrics"]["final"]}
    timing = {}
    for name, paired in (("SFT + GRPO", False), ("SFT + paired GRPO", True)):
        result = train_grpo(
            **study.grpo,
            out=out / ("grpo_paired" if paired else "grpo"),
            model=sft["model"],
            paired=paired,
            num_generations=4,
            batch_size=8,
            max_steps=args.grpo_steps,
            max_completion_length=64,
            learning_rate=1e-4,
            lora={"enabled": False},
            evaluation={**evaluation, "base": False},
            progress=False,
        )
        rows[name] = result["metrics"]["final"]
        timing[name] = {k: result[k] for k in ("train_seconds", "env_seconds", "env_share")}
    table = Table(title=study.title)
    table.add_column("model")
    for metric in study.metrics:
        table.add_column(metric)
    for name, metrics in rows.items():
        table.add_row(name, *(cell(metrics, m) for m in study.metrics))
    Console().print(table)
    for name, t in timing.items():
        print(f"{name}: {t['train_seconds']:.0f} s training, env share of a step {100 * t['env_share']:.3f}%")
    summary = {"args": vars(args), "evaluation": evaluation, "rows": rows, "timing": timing}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
