"""Post-training the tiny audio-language model on VoiceGate speaker-switch under A+T: SFT, then
plain and paired GRPO (in paired groups the two sides have the same words and differ only in the
waveform).

Every model plays the same held-out speaker-switch inputs (greedy) through the runner as
``audio_llm@A+T``: switch mute with same-speaker and text-only tool selection, false execution and
malformed rate, with item-group bootstrap CIs; and whether it hears the switch: switch mute minus
same-speaker mute over the same commands, with a bootstrap CI. This is the study a text model
cannot do, since the three inputs of a command share their words.

Writes benchmarks/out/audio_post_training/summary.json (and every run folder next to it).

    python -m benchmarks.voicegate.audio_post_training [--demos N] [--sft-epochs E] [--grpo-steps S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from hear_gym.core.tables import percent_ci
from training.llm.audio_grpo import train_audio_grpo
from training.llm.audio_sft import train_audio_sft
from training.tiny_model import build_tiny_audio_lm

OUT = Path(__file__).resolve().parents[1] / "out" / "audio_post_training"
METRICS = ("malformed", "switch_mute", "same_speaker_tool", "text_only_tool", "false_execution")
FAMILIES = ("speaker_switch",)


def switch_minus_same_speaker(run: Path, resamples: int = 10_000) -> tuple[float, float, float]:
    """Does the model hear the switch? Its mute rate on switched commands minus on the same
    commands said by the wearer (same words, different audio), in points, with a bootstrap CI
    over the commands (both inputs of a command resampled together)."""
    by_command: dict[str, dict[str, bool]] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["condition"] in ("same_speaker", "switch"):
            muted = record["outcome"]["action"]["kind"] == "mute"
            by_command.setdefault(record["group"], {})[record["condition"]] = muted
    differences = np.array([float(c["switch"]) - float(c["same_speaker"]) for c in by_command.values()])
    rng = np.random.default_rng(0)
    means = differences[rng.integers(0, len(differences), (resamples, len(differences)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return 100 * float(differences.mean()), 100 * float(low), 100 * float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demos", type=int, default=None, help="SFT demonstrations (default: all)")
    parser.add_argument("--sft-epochs", type=float, default=3.0)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--grpo-steps", type=int, default=20)
    parser.add_argument("--eval-limit", type=int, default=None, help="first N held-out inputs")
    args = parser.parse_args()
    os.environ.setdefault("WANDB_MODE", "offline")
    shutil.rmtree(OUT, ignore_errors=True)
    model = build_tiny_audio_lm(OUT / "tiny_audio_model")
    evaluation = {"split": "test", "families": FAMILIES, "batch_size": 16, "limit": args.eval_limit}
    # A random tiny model: all language-model weights train (LoRA is the default for real models);
    # the audio encoder stays frozen, as VoxGate froze it.
    sft = train_audio_sft(
        out=OUT / "sft",
        model=str(model),
        families=FAMILIES,
        demo_limit=args.demos,
        epochs=args.sft_epochs,
        learning_rate=args.sft_lr,
        batch_size=8,
        lora={"enabled": False},
        evaluation={**evaluation, "base": True},
        progress=False,
    )
    rows = {"untrained": sft["metrics"]["base"], "SFT": sft["metrics"]["final"]}
    runs = {"untrained": OUT / "sft" / "evals" / "base", "SFT": OUT / "sft" / "evals" / "final"}
    timing = {}
    for name, paired in (("SFT + GRPO", False), ("SFT + paired GRPO", True)):
        folder = OUT / ("grpo_paired" if paired else "grpo")
        grpo = train_audio_grpo(
            out=folder,
            model=sft["model"],
            families=FAMILIES,
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
        rows[name], runs[name] = grpo["metrics"]["final"], folder / "evals" / "final"
        timing[name] = {k: grpo[k] for k in ("train_seconds", "env_seconds", "env_share")}
    table = Table(title="VoiceGate speaker-switch held-out, tiny audio model on CPU, A+T, % [95% CI]")
    table.add_column("model")
    for metric in METRICS:
        table.add_column(metric)
    for name, metrics in rows.items():
        table.add_row(name, *(percent_ci(metrics.get(m)) for m in METRICS))
    Console().print(table)
    hears = {name: switch_minus_same_speaker(folder) for name, folder in runs.items()}
    for name, (point, low, high) in hears.items():
        print(f"{name}: switch mute - same-speaker mute {point:+.1f} [{low:+.1f}, {high:+.1f}] points")
    for name, t in timing.items():
        print(f"{name}: {t['train_seconds']:.0f} s training, env share of a step {100 * t['env_share']:.3f}%")
    summary = {"args": vars(args), "evaluation": evaluation, "rows": rows, "hears": hears, "timing": timing}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
