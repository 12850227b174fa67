"""Aggregate DeliveryPlan runs: per cell (agent x access condition) every verifier metric, case
metrics over both sides of every case and pair metrics over the cases, each with a case-level
bootstrap CI; one table per cell; and the per-episode scalars trainers log."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.table import Table

from hear_gym.envs.deliveryplan.verifier import CASE_METRICS, PAIR_METRICS
from hear_gym.stats.bootstrap import bootstrap


def case_metric_rows(record: dict[str, Any]) -> dict[str, float]:
    """A finished case's metrics: case metrics averaged over its two sides, its pair metrics,
    the original side's plan-slot accuracy, and the malformed share."""
    sides = record["case_scores"]
    row = {m: float(np.mean([s[m] for s in sides])) for m in CASE_METRICS}
    row.update({m: float(record["pair_scores"][m]) for m in PAIR_METRICS})
    row["plan_slot_accuracy_original"] = float(sides[0]["plan_slot_accuracy"])
    row["malformed_rate"] = float(np.mean(record["malformed"]))
    return row


METRICS = (*CASE_METRICS, "plan_slot_accuracy_original", *PAIR_METRICS, "malformed_rate")


def metric_estimates(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    rows = [case_metric_rows(r) for r in records]
    out = {}
    for metric in METRICS:
        values = np.array([row[metric] for row in rows])
        out[metric] = bootstrap(lambda idx, v=values: v[idx].mean(axis=-1), len(values)).as_dict()
    return out


def summarize(records: Sequence[dict[str, Any]], config: Any) -> dict[str, Any]:
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_cell[record["cell"]].append(record)
    cells = {}
    for cell in config.cells:
        rows = by_cell.get(cell.name, [])
        cells[cell.name] = {
            "agent": cell.agent,
            "access": cell.access,
            "n_episodes": len(rows),
            "metrics": metric_estimates(rows) if rows else {},
        }
    return {"cells": cells}


def tables(metadata: dict[str, Any]) -> list[Table]:
    out = []
    for name, cell in metadata["cells"].items():
        table = Table("metric", "mean [95% CI]", title=f"{name} ({cell['n_episodes']} cases)")
        for metric, e in cell["metrics"].items():
            table.add_row(metric, f"{e['point']:.3f} [{e['low']:.3f}, {e['high']:.3f}]")
        out.append(table)
    return out


def episode_scalars(record: dict[str, Any]) -> dict[str, float]:
    row = case_metric_rows(record)
    return {
        "return": float(record["return"]),
        "gcite": row["gcite"],
        "plan_slot_accuracy": row["plan_slot_accuracy"],
        "counterfactual_consistency": row["counterfactual_consistency"],
        "malformed_rate": row["malformed_rate"],
    }
