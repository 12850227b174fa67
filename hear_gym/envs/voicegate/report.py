"""Aggregate VoiceGate runs: per cell (agent x access condition) the joint headline metrics and
the per-condition tables of each family, with item-group bootstrap CIs; and their layout."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from hear_gym.core.run_config import RunConfig
from hear_gym.core.tables import percent_ci
from hear_gym.envs.voicegate.items.generator import conditions_of
from hear_gym.envs.voicegate.items.model import Family
from hear_gym.envs.voicegate.metrics import condition_table, headline_metrics


def summarize(records: Sequence[dict[str, Any]], config: RunConfig) -> dict[str, Any]:
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_cell[record["cell"]].append(record)
    cells = {}
    for cell in config.cells:
        rows = by_cell.get(cell.name, [])
        conditions = {}
        for family in Family:
            of_family = [r for r in rows if r["family"] == family.value]
            if of_family:
                conditions[family.value] = {
                    c: {k: v.as_dict() if v else None for k, v in measures.items()}
                    for c, measures in condition_table(of_family, conditions_of(family)).items()
                }
        cells[cell.name] = {
            "agent": cell.agent,
            "access": cell.access,
            "n_episodes": len(rows),
            "metrics": {k: v.as_dict() for k, v in headline_metrics(rows).items()} if rows else {},
            "conditions": conditions,
        }
    return {"cells": cells}


def tables(metadata: dict[str, Any]) -> list[Table]:
    """Per cell: the joint metrics, then one condition table per family."""
    out = []
    for name, cell in metadata["cells"].items():
        joint = Table("metric", "% [95% CI]", "groups", title=name)
        for metric, est in cell["metrics"].items():
            joint.add_row(metric, percent_ci(est), str(est["n_scenarios"]))
        out.append(joint)
        for family, rows in cell["conditions"].items():
            sub = Table("condition", "mute %", "matching tool %", "accuracy %", title=f"{name}: {family}")
            for condition in (c for c in conditions_of(family) if c in rows):
                sub.add_row(
                    condition,
                    *(percent_ci(rows[condition][k]) for k in ("mute", "matching_tool", "accuracy")),
                )
            out.append(sub)
    return out
