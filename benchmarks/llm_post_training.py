"""Post-training a chat model on CPU: SFT on VoiceGate demonstrations, then GRPO on the env reward,
plain and paired, with the tiny offline model (``training.tiny_model``).

Every model plays the same held-out VoiceGate items (access T, greedy decoding) through the
runner, so its switch mute, same-speaker and text-only tool selection, false execution and
malformed rate carry item-group bootstrap CIs. The GRPO runs also time the environment's share
of a training step (the reward calls, which step the env).

Writes benchmarks/out/llm_post_training/summary.json (and every run folder next to it).

    python benchmarks/llm_post_training.py [--demos N] [--sft-epochs E] [--grpo-steps S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from rich.console import Console
from rich.table import Table

from hear_gym.core.tables import percent_ci
from training.grpo import train_grpo
from training.sft import train_sft
from training.tiny_model import build_tiny_causal_lm

OUT = Path(__file__).parent / "out" / "llm_post_training"
METRICS = ("malformed", "switch_mute", "same_speaker_tool", "text_only_tool", "false_execution")
EVALUATION = {"split": "test", "families": ("speaker_switch", "self_talk"), "batch_size": 16}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demos", type=int, default=480, help="SFT demonstrations (seeded sample)")
    parser.add_argument("--sft-epochs", type=float, default=2.0)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--grpo-steps", type=int, default=10)
    parser.add_argument("--eval-limit", type=int, default=None, help="first N held-out items")
    args = parser.parse_args()
    os.environ.setdefault("WANDB_MODE", "offline")
    shutil.rmtree(OUT, ignore_errors=True)
    model = build_tiny_causal_lm(OUT / "tiny_model")
    evaluation = {**EVALUATION, "limit": args.eval_limit}
    # The tiny model is random: LoRA on its attention alone cannot teach it a grammar, so the
    # benchmark fine-tunes all weights (LoRA is the default for real models).
    sft = train_sft(
        out=OUT / "sft",
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
            out=OUT / ("grpo_paired" if paired else "grpo"),
            model=sft["model"],
            paired=paired,
            families=("speaker_switch", "self_talk"),
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
    table = Table(title="VoiceGate held-out (speaker-switch + self-talk), tiny model on CPU, % [95% CI]")
    table.add_column("model")
    for metric in METRICS:
        table.add_column(metric)
    for name, metrics in rows.items():
        table.add_row(name, *(percent_ci(metrics.get(m)) for m in METRICS))
    Console().print(table)
    for name, t in timing.items():
        print(f"{name}: {t['train_seconds']:.0f} s training, env share of a step {100 * t['env_share']:.3f}%")
    summary = {"args": vars(args), "evaluation": evaluation, "rows": rows, "timing": timing}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
