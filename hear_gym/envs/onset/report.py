"""Aggregate Onset runs: per cell (agent x access condition) the four PACT-SLM measures, the
post-onset exposed/internal split and the onset error, for all records and per rendering (clean,
noise15), with contrast-group bootstrap CIs; and their layout as tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from hear_gym.core.run_config import RunConfig
from hear_gym.core.tables import percent_ci
from hear_gym.envs.onset.metrics import COUNTS, PERCENT_METRICS, SLICES, counts, in_slice, metric_table


def summarize(records: Sequence[dict[str, Any]], config: RunConfig) -> dict[str, Any]:
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_cell[record["cell"]].append(record)
    cells = {}
    for cell in config.cells:
        rows = by_cell.get(cell.name, [])
        table = metric_table(rows) if rows else {}
        cells[cell.name] = {
            "agent": cell.agent,
            "access": cell.access,
            "n_episodes": len(rows),
            "n_groups": len({r["group_id"] for r in rows}),
            "metrics": {s: {m: e.as_dict() for m, e in by_metric.items()} for s, by_metric in table.items()},
            "counts": {
                s: {m: list(counts([r for r in rows if in_slice(r, s)], m)) for m in COUNTS} for s in table
            },
        }
    return {"cells": cells}


def tables(metadata: dict[str, Any]) -> list[Table]:
    """Per cell: one row per metric, one column per slice (all, clean, noise15)."""
    out = []
    for name, cell in metadata["cells"].items():
        slices = [s for s in SLICES if s in cell["metrics"]]
        table = Table(
            "metric", *(f"{s} % [95% CI]" for s in slices), title=f"{name} ({cell['n_groups']} groups)"
        )
        for metric in PERCENT_METRICS:
            table.add_row(metric, *(percent_ci(cell["metrics"][s].get(metric)) for s in slices))
        table.add_row(
            "onset_error (fraction)",
            *(
                f"{e['point']:+.3f} [{e['low']:+.3f}, {e['high']:+.3f}]"
                for e in (cell["metrics"][s]["onset_error"] for s in slices)
            ),
        )
        out.append(table)
    return out
