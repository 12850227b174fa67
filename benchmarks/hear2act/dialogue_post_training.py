"""Dialogue GRPO on Hear2Act under T+S with a small model built from scratch, on CPU: the recipe
the dialogue learning test asserts (``agents.hear2act.dialogue_learning_recipe``,
``tests/training/test_dialogue_learning.py``).

For each seed: build ``LEARNING_TOOL_LM`` (the model's initial weights follow the seed), SFT it on
the state-aware agent's tool-calling dialogues (``train_tool_sft``), then train it with dialogue
GRPO through TRL's ``environment_factory`` (``train_dialogue_grpo``, task
``hear2act_dialogue_state``). The held-out test scenarios are played by the SFT model (``base``)
and the GRPO model (``final``), each scenario ``num_generations`` times at the training
temperature on the same seeded draws; the paired lift is final minus base on the same scenarios
(scenario bootstrap).
``--grpo-lr`` sets GRPO's learning rate (``1e-12``: the control that cannot learn).

Writes benchmarks/out/dialogue_post_training/seed_<S>/ (run folders) and summary.json.

    python -m benchmarks.hear2act.dialogue_post_training [--seeds 0 1] [--grpo-lr LR] [--grpo-steps N]
                                                [--out DIR] [--sft-from SFT_RUN]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from agents.hear2act.dialogue_learning_recipe import HEAR2ACT_DIALOGUE_GRPO, HEAR2ACT_TOOL_SFT
from training.llm.dialogue_grpo import train_dialogue_grpo
from training.llm.heldout import evaluation_records, mean_value, paired_lift, train_curve
from training.llm.run_folder import read_curve
from training.llm.tool_sft import train_tool_sft
from training.tiny_model import LEARNING_TOOL_LM, build_tiny_causal_lm

OUT = Path(__file__).resolve().parents[1] / "out" / "dialogue_post_training"
QUIET = {"wandb_project": None, "progress": False}


def every(values: list[float], n: int) -> list[float]:
    """Means of consecutive windows of ``n`` values (a readable curve)."""
    return [round(sum(values[i : i + n]) / len(values[i : i + n]), 3) for i in range(0, len(values), n)]


def rate(records: list[dict[str, Any]], key: str) -> float:
    return sum(float(r[key]) for r in records) / len(records)


def one_seed(
    seed: int, out: Path, grpo_overrides: dict[str, Any], sft_from: Path | None = None
) -> dict[str, Any]:
    """SFT then GRPO for ``seed``; with ``sft_from`` (a finished SFT run folder of the same seed)
    GRPO starts from that run's model instead of a new SFT."""
    start = time.perf_counter()
    sft_dir = sft_from or out / "sft"
    if sft_from is None:
        model = build_tiny_causal_lm(
            out / "model", seed=seed, **LEARNING_TOOL_LM, env_ids=("hear_gym/Hear2Act-v0",)
        )
        train_tool_sft(out=sft_dir, model=str(model), seed=seed, **HEAR2ACT_TOOL_SFT, **QUIET)
    sft_seconds = time.perf_counter() - start
    grpo = {**HEAR2ACT_DIALOGUE_GRPO, **grpo_overrides}
    train_dialogue_grpo(out=out / "grpo", model=str(sft_dir / "final"), seed=seed, **grpo, **QUIET)
    before, after = evaluation_records(out / "grpo", "base"), evaluation_records(out / "grpo", "final")
    rows = [r for r in read_curve(out / "grpo") if r.get("kind") == "train"]
    return {
        "seed": seed,
        "sft_seconds": round(sft_seconds, 1),
        "total_seconds": round(time.perf_counter() - start, 1),
        "sft_run": str(sft_dir),
        "sft_dialogues": len((sft_dir / "demos.jsonl").read_text().splitlines()),
        "sft_loss": every(train_curve(sft_dir, "loss"), 8),
        "grpo_reward": every([r["reward"] for r in rows], 4),
        "grpo_invalid_call_rate": every([r["invalid_call_rate"] for r in rows], 4),
        "grpo_played_out": every([r["played_out_fraction"] for r in rows], 4),
        "base": {
            "return": mean_value(before).as_dict(),
            "success": rate(before, "success"),
            "calls": rate(before, "calls"),
            "played_out": rate(before, "played_out"),
        },
        "final": {
            "return": mean_value(after).as_dict(),
            "success": rate(after, "success"),
            "calls": rate(after, "calls"),
            "played_out": rate(after, "played_out"),
        },
        "lift": paired_lift(before, after).as_dict(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--grpo-lr", type=float, default=None)
    parser.add_argument("--grpo-steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--sft-from",
        type=Path,
        default=None,
        help="A finished SFT run folder of the (one) seed to start GRPO from (the control reuses it).",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)  # a small model gains nothing from threads on a shared machine
    overrides = {
        k: v
        for k, v in {"learning_rate": args.grpo_lr, "max_steps": args.grpo_steps}.items()
        if v is not None
    }
    results = []
    for seed in args.seeds:
        folder = args.out / f"seed_{seed}"
        shutil.rmtree(folder, ignore_errors=True)
        results.append(one_seed(seed, folder, overrides, args.sft_from))
        print(json.dumps(results[-1]), flush=True)
    summary = {"sft": HEAR2ACT_TOOL_SFT, "grpo": {**HEAR2ACT_DIALOGUE_GRPO, **overrides}, "seeds": results}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    for r in results:
        lift = r["lift"]
        print(
            f"seed {r['seed']}: return {r['base']['return']['point']:+.3f} -> {r['final']['return']['point']:+.3f}, "
            f"lift {lift['point']:+.3f} [{lift['low']:+.3f}, {lift['high']:+.3f}], {r['total_seconds']:.0f} s"
        )


if __name__ == "__main__":
    main()
