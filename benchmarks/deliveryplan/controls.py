"""The VoxReason controls on the paper's splits, played through ``hear_gym/DeliveryPlan-v0``
(access T, strict JSON text actions), beside the paper's figures.

Run: ``python -m benchmarks.deliveryplan.controls [--out benchmarks/out/deliveryplan_controls.json]``.
Prints four tables: the controlled comparison on all 100 paired cases (text-only vs oracle,
blind edit and prior-only, fitted on the public training material), the evidence-sensitivity
matrix (6 controls x 24 held-out pairs of the source-key-disjoint test split x 3 seeds = 432
paired records), the prior-only control on each partition's test split, and the citation
controls (every record, none, one by listing position, every record of one kind) on all 100
cases x 3 seeds beside the F1 and decisive-cue recall of citing as many records at random.
"""

from __future__ import annotations

import argparse
import json
from itertools import combinations
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from agents.deliveryplan.planners import CITATION_CONTROLS, records_cited
from agents.deliveryplan.play import mean_rows, play_control
from hear_gym.envs.deliveryplan.cases import RECORD_NAMES, generate_cases
from hear_gym.envs.deliveryplan.splits import MATRIX_CONDITIONS, MATRIX_SEEDS, PARTITIONS, split_ids

SHOWN = (
    "evidence_f1",
    "evidence_recall",
    "decisive_cue_recall",
    "hallucinated_rate",
    "uncited_rate",
    "plan_slot_accuracy_original",
    "plan_slot_accuracy",
    "gcite",
    "counterfactual_consistency",
    "required_change_accuracy",
    "unexpected_change_rate",
)
PAPER = {  # VoxReason §6.1-6.3, Table 4: the figures the notes report
    ("all", "text_only"): {
        "evidence_f1": 0.857,
        "decisive_cue_recall": 0.0,
        "plan_slot_accuracy": 0.185,
        "gcite": 0.427,
        "hallucinated_rate": 0.0,
        "uncited_rate": 0.25,
    },
    ("source_key_disjoint", "prior_only"): {
        "plan_slot_accuracy_original": 0.958,
        "counterfactual_consistency": 0.0,
        "required_change_accuracy": 0.0,
    },
    ("source_emotion_disjoint", "prior_only"): {"plan_slot_accuracy_original": 0.219},
}


def means(rows: list[dict]) -> dict[str, float]:
    return mean_rows(rows, SHOWN)


def chance_f1(n_cited: int) -> float:
    """Mean evidence F1 over every case side of citing ``n_cited`` of its records at random."""
    out = []
    for view in (v for c in generate_cases() for v in (c.original, c.edited)):
        gold = set(range(len(view.gold_evidence)))
        out.append(
            np.mean(
                [
                    2 * len(gold & set(cited)) / (n_cited + len(gold)) if n_cited else 0.0
                    for cited in combinations(range(len(RECORD_NAMES)), n_cited)
                ]
            )
        )
    return float(np.mean(out))


def run() -> dict[str, dict[str, dict[str, float]]]:
    everything = split_ids("all")
    results: dict[str, dict[str, dict[str, float]]] = {"all": {}}
    for control in ("text_only", "oracle", "prior_only", "blind_edit"):
        results["all"][control] = means(play_control(control, everything, "public"))
    held_out = split_ids("test", "source_key_disjoint")
    results["matrix"] = {}
    for control in MATRIX_CONDITIONS:
        rows = [
            r for s in MATRIX_SEEDS for r in play_control(control, held_out, "source_key_disjoint", seed=s)
        ]
        results["matrix"][control] = {**means(rows), "n_records": len(rows)}
    for partition in PARTITIONS:
        test = split_ids("test", partition)
        results[partition] = {
            "prior_only": {**means(play_control("prior_only", test, partition)), "n_cases": len(test)},
            "blind_edit": {**means(play_control("blind_edit", test, partition)), "n_cases": len(test)},
        }
    results["citation"] = {}
    for control in CITATION_CONTROLS:
        rows = [r for s in MATRIX_SEEDS for r in play_control(control, everything, "public", seed=s)]
        n_cited = records_cited(control)
        results["citation"][control] = {
            **means(rows),
            "records_cited": n_cited,
            "chance_f1": chance_f1(n_cited),
            "chance_decisive_cue_recall": n_cited / len(RECORD_NAMES),
        }
    return results


def tables(results) -> list[Table]:
    out = []
    for block, title in (
        ("all", "All 100 paired cases (public-train fit)"),
        ("matrix", "Evidence-sensitivity matrix: 6 controls x 24 held-out pairs x 3 seeds"),
        *((p, f"prior_only and blind_edit on {p} test") for p in PARTITIONS),
    ):
        table = Table("control", *SHOWN, title=title)
        for control, row in results[block].items():
            paper = PAPER.get(("source_key_disjoint" if block == "matrix" else block, control), {})
            table.add_row(
                control,
                *(f"{row[m]:.3f}" + (f" ({paper[m]:.3f})" if m in paper else "") for m in SHOWN),
            )
        out.append(table)
    table = Table(
        "control",
        "records cited",
        "evidence F1",
        "chance F1",
        "decisive-cue recall",
        "chance decisive recall",
        title="Citation controls (chance: as many records cited at random)",
    )
    for control, row in results["citation"].items():
        table.add_row(
            control,
            str(row["records_cited"]),
            f"{row['evidence_f1']:.3f}",
            f"{row['chance_f1']:.3f}",
            f"{row['decisive_cue_recall']:.3f}",
            f"{row['chance_decisive_cue_recall']:.3f}",
        )
    out.append(table)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    results = run()
    console = Console(width=250)
    for table in tables(results):
        console.print(table)
    console.print("(paper's figure in parentheses)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
