"""Post-training a chat model on CPU with tiny offline models (``training.tiny_model``): SFT on
expert demonstrations, then GRPO on the env reward. Two studies:

* ``voicegate``, the recipe the learning tests assert (``tests/training/test_llm_learning.py``):
  the ``LEARNING_LM`` model (hidden 128, 4 layers, VoiceGate's fixed instruction one token of its
  vocabulary) is fine-tuned on VoiceGate's gold actions without the switched commands
  (``VOICEGATE_SFT``), then trained with GRPO on side- and self-talk with the commands' text-only
  inputs (``VOICEGATE_GRPO``). It reports the valid-reply rate (``parse_reply``) and mean reward
  on held-out items, the paired lift of GRPO on held-out side-talk and on every held-out item
  (item-group bootstrap CIs), and the curves: SFT loss, GRPO reward and valid-format rate by
  step. Then plain vs paired GRPO from an SFT model with the switched commands
  (``VOICEGATE_PAIRING_SFT``) on the speaker-switch pairs, same items and budget
  (``VOICEGATE_PAIRING``): the lift of each over
  the SFT model on the held-out speaker-switch inputs, paired minus plain, and the mute rates
  on switched commands and their same-speaker twins.
* ``hear2act``: SFT on Hear2Act demonstrations (``state_aware@T+S`` under prosody feedback), GRPO
  on assent pairs through T+S (the continuation reward), plain and paired, with the first tiny
  model (hidden 64). Every model plays the same held-out dialogues as ``llm@T+S``.

Writes benchmarks/out/llm_post_training/<study>/summary.json (and every run folder).

    python -m benchmarks.llm.post_training [--study voicegate|hear2act] [--demos N]
        [--sft-epochs E] [--sft-lr LR] [--grpo-steps S] [--grpo-lr LR] [--eval-limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from agents.voicegate.learning_recipe import (
    FULL_WEIGHTS,
    VOICEGATE_GRPO,
    VOICEGATE_PAIRING,
    VOICEGATE_PAIRING_SFT,
    VOICEGATE_SFT,
)
from agents.voicegate.reply_checks import ended_valid_rate, greedy_replies, valid_reply_rate
from hear_gym.core.tables import percent_ci
from training.llm.grpo import train_grpo
from training.llm.heldout import evaluation_records, mean_value, paired_lift, train_curve
from training.llm.sft import train_sft
from training.tiny_model import LEARNING_LM, build_tiny_causal_lm

OUT = Path(__file__).resolve().parents[1] / "out" / "llm_post_training"


def with_overrides(recipe: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    return {**recipe, **{k: v for k, v in overrides.items() if v is not None}}


def every(values: list[float], n: int) -> list[float]:
    """Means of consecutive windows of ``n`` values (a readable curve)."""
    return [round(sum(values[i : i + n]) / len(values[i : i + n]), 3) for i in range(0, len(values), n)]


def voicegate(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    model = build_tiny_causal_lm(out / "tiny_model", **LEARNING_LM, env_ids=("hear_gym/VoiceGate-v0",))
    sft_settings = with_overrides(
        VOICEGATE_SFT, demo_limit=args.demos, epochs=args.sft_epochs, learning_rate=args.sft_lr
    )
    evaluation = {**sft_settings["evaluation"], "base": True, "limit": args.eval_limit}
    sft = train_sft(
        **{**sft_settings, "evaluation": evaluation}, out=out / "sft", model=str(model), progress=False
    )
    grpo_settings = with_overrides(VOICEGATE_GRPO, max_steps=args.grpo_steps, learning_rate=args.grpo_lr)
    grpo = train_grpo(**grpo_settings, out=out / "grpo", model=sft["model"], progress=False)
    held_out = {
        "SFT": evaluation_records(out / "grpo", "base"),
        "SFT + GRPO": evaluation_records(out / "grpo", "final"),
    }
    evals = {
        "untrained, all held-out items": evaluation_records(out / "sft", "base"),
        **{f"{name}, all held-out items": records for name, records in held_out.items()},
        **{f"{name}, held-out side-talk": side_talk(records) for name, records in held_out.items()},
    }
    rows = {
        name: {
            "items": len(records),
            "valid replies": valid_reply_rate(records),
            "reward": mean_value(records).as_dict(),
        }
        for name, records in evals.items()
    }
    # strict: the reply ended before the cap and parses (every held-out item, each model)
    ended_valid = {
        name: ended_valid_rate(greedy_replies(folder))
        for name, folder in (("untrained", model), ("SFT", sft["model"]), ("SFT + GRPO", grpo["model"]))
    }
    lifts = {
        "held-out side-talk": paired_lift(*(side_talk(records) for records in held_out.values())),
        "all held-out items": paired_lift(*held_out.values()),
    }
    table = Table(title="VoiceGate held-out items, access T, greedy; LEARNING_LM on CPU [95% CI]")
    for column in ("model", "items", "valid replies %", "mean reward"):
        table.add_column(column)
    for name, row in rows.items():
        reward = row["reward"]
        table.add_row(
            name,
            str(row["items"]),
            f"{100 * row['valid replies']:.1f}",
            f"{reward['point']:+.3f} [{reward['low']:+.3f}, {reward['high']:+.3f}]",
        )
    Console().print(table)
    for name, lift in lifts.items():
        print(f"GRPO paired lift in {name} reward: {lift.point:+.3f} [{lift.low:+.3f}, {lift.high:+.3f}]")
    curves = {
        "sft_loss_every_10_steps": every(train_curve(out / "sft", "loss"), 10),
        "grpo_reward_every_5_steps": every(train_curve(out / "grpo", "reward"), 5),
        "grpo_valid_format_every_5_steps": every(train_curve(out / "grpo", "valid_format"), 5),
    }
    for name, curve in curves.items():
        print(f"{name}: {curve}")
    timing = {"grpo": {k: grpo[k] for k in ("train_seconds", "env_seconds", "env_share")}}
    return {
        "rows": rows,
        "ended_valid": ended_valid,
        "grpo_paired_lift": {name: lift.as_dict() for name, lift in lifts.items()},
        "curves": curves,
        "timing": timing,
        "plain_vs_paired": plain_vs_paired(args, out, model),
    }


def side_talk(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["family"] == "side_talk"]


def mute_rates(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Share of muted replies on the held-out switched commands and on their same-speaker twins
    (the same words), item-group bootstrap CIs."""
    return {
        condition: mean_value(
            [
                {**r, "muted": float(r["outcome"]["action"]["kind"] == "mute")}
                for r in records
                if r["condition"] == condition
            ],
            "muted",
        ).as_dict()
        for condition in ("switch", "same_speaker")
    }


def plain_vs_paired(args: argparse.Namespace, out: Path, model: Path) -> dict[str, Any]:
    """GRPO on the speaker-switch pairs from its own SFT model (``VOICEGATE_PAIRING_SFT``, with the
    switched commands), paired groups vs the same items as ordinary groups, with the same budget
    (``VOICEGATE_PAIRING``); both play the held-out speaker-switch inputs. The paired lift of
    each over the SFT model, paired minus plain, and the mute rates."""
    sft_settings = with_overrides(
        VOICEGATE_PAIRING_SFT, demo_limit=args.demos, epochs=args.sft_epochs, learning_rate=args.sft_lr
    )
    sft_model = train_sft(**sft_settings, out=out / "sft_pairing", model=str(model), progress=False)["model"]
    settings = with_overrides(VOICEGATE_PAIRING, max_steps=args.grpo_steps, learning_rate=args.grpo_lr)
    runs = {"plain": out / "grpo_plain", "paired": out / "grpo_paired"}
    for name, run in runs.items():
        evaluation = {**settings["evaluation"], "base": name == "plain"}  # the SFT model once
        train_grpo(
            **{**settings, "evaluation": evaluation},
            paired=name == "paired",
            out=run,
            model=sft_model,
            progress=False,
        )
    before = evaluation_records(runs["plain"], "base")
    after = {name: evaluation_records(run, "final") for name, run in runs.items()}
    lifts = {f"{name} - SFT": paired_lift(before, records) for name, records in after.items()}
    lifts["paired - plain"] = paired_lift(after["plain"], after["paired"])
    for name, lift in lifts.items():
        print(
            f"held-out speaker-switch reward, {name}: {lift.point:+.3f} [{lift.low:+.3f}, {lift.high:+.3f}]"
        )
    mutes = {name: mute_rates(records) for name, records in {"SFT": before, **after}.items()}
    print(f"mute rates (switch, same-speaker): {json.dumps(mutes)}")
    return {"lifts": {name: lift.as_dict() for name, lift in lifts.items()}, "mute_rates": mutes}


HEAR2ACT_OPTIONS = {"feedback": "prosody", "reward": "success", "turn_cost": 0.05}
HEAR2ACT_METRICS = ("1st%", "premature closure%", "invalid share", "dialogue length")


def hear2act_cell(metrics: dict[str, Any], name: str) -> str:
    estimate = metrics.get(name)
    if name == "dialogue length" and estimate:
        return f"{estimate['point']:.1f} [{estimate['low']:.1f}, {estimate['high']:.1f}]"
    return percent_ci(estimate)


def hear2act(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    model = build_tiny_causal_lm(out / "tiny_model")
    evaluation = {
        "split": "test",
        "batch_size": 16,
        "env_options": HEAR2ACT_OPTIONS,
        "limit": args.eval_limit,
    }
    sft = train_sft(
        env_id="hear_gym/Hear2Act-v0",
        env_options={"feedback": "prosody"},
        out=out / "sft",
        model=str(model),
        demo_limit=args.demos or 48,
        epochs=args.sft_epochs or 3.0,
        learning_rate=args.sft_lr or 3e-3,
        batch_size=8,
        lora=FULL_WEIGHTS,
        evaluation={**evaluation, "base": True},
        progress=False,
    )
    rows = {"untrained": sft["metrics"]["base"], "SFT": sft["metrics"]["final"]}
    timing = {}
    for name, paired in (("SFT + GRPO", False), ("SFT + paired GRPO", True)):
        result = train_grpo(
            task="hear2act_assent",
            env_options={"reward": "success", "turn_cost": 0.05},
            out=out / ("grpo_paired" if paired else "grpo"),
            model=sft["model"],
            paired=paired,
            num_generations=4,
            batch_size=8,
            max_steps=args.grpo_steps or 20,
            max_completion_length=64,
            learning_rate=args.grpo_lr or 1e-4,
            lora=FULL_WEIGHTS,
            evaluation={**evaluation, "base": False},
            progress=False,
        )
        rows[name] = result["metrics"]["final"]
        timing[name] = {k: result[k] for k in ("train_seconds", "env_seconds", "env_share")}
    table = Table(title="Hear2Act held-out dialogues as llm@T+S (prosody), tiny model on CPU [95% CI]")
    table.add_column("model")
    for metric in HEAR2ACT_METRICS:
        table.add_column(metric)
    for name, metrics in rows.items():
        table.add_row(name, *(hear2act_cell(metrics, m) for m in HEAR2ACT_METRICS))
    Console().print(table)
    return {"rows": rows, "timing": timing}


STUDIES = {"voicegate": voicegate, "hear2act": hear2act}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=sorted(STUDIES), default="voicegate")
    parser.add_argument(
        "--demos",
        type=int,
        default=None,
        help="VoiceGate: demonstrations (seeded sample); Hear2Act: dialogues",
    )
    parser.add_argument("--sft-epochs", type=float, default=None)
    parser.add_argument("--sft-lr", type=float, default=None)
    parser.add_argument("--grpo-steps", type=int, default=None)
    parser.add_argument("--grpo-lr", type=float, default=None)
    parser.add_argument("--eval-limit", type=int, default=None, help="first N held-out items")
    args = parser.parse_args()
    torch.set_num_threads(1)  # a tiny model gains nothing from threads on a busy machine
    os.environ.setdefault("WANDB_MODE", "offline")
    out = OUT / args.study
    shutil.rmtree(out, ignore_errors=True)
    summary = {"args": vars(args), **STUDIES[args.study](args, out)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
