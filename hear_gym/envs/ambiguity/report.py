"""Aggregate Ambiguity runs: per cell (agent x access condition) the accuracy of every row of
``metrics.ROWS`` per language with instance-bootstrap CIs, and the minimal-pair statistics; and
their layout as tables (one per cell: rows x languages)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from hear_gym.core.run_config import RunConfig
from hear_gym.core.tables import percent_ci
from hear_gym.envs.ambiguity.metrics import LANGUAGE_SLICES, ROWS, accuracy_table, pair_statistics


def summarize_records(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    table = accuracy_table(records)
    return {
        "n_episodes": len(records),
        "n_instances": len({r["instance_id"] for r in records}),
        # language -> row -> accuracy, and the minimal-pair statistics (the runner's ``metrics``)
        "metrics": {
            **{lang: {row: e.as_dict() for row, e in rows.items()} for lang, rows in table.items()},
            "pairs": {name: e.as_dict() for name, e in pair_statistics(records).items()},
        },
    }


def summarize(records: Sequence[dict[str, Any]], config: RunConfig) -> dict[str, Any]:
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_cell[record["cell"]].append(record)
    cells = {}
    for cell in config.cells:
        rows = by_cell.get(cell.name, [])
        cells[cell.name] = {"agent": cell.agent, "access": cell.access, **summarize_records(rows)}
    return {"cells": cells}


def accuracy_rows(summary: dict[str, Any], title: str) -> Table:
    """One summary's accuracy (%) [95% CI] per row and language."""
    metrics = summary["metrics"]
    languages = [lang for lang in LANGUAGE_SLICES if lang in metrics]
    table = Table("row", *(f"{lang} % [95% CI]" for lang in languages), title=title)
    for row in ROWS:
        cells = [metrics[lang].get(row) for lang in languages]
        if any(cells):
            table.add_row(row, *(percent_ci(c) for c in cells))
    for name, estimate in metrics.get("pairs", {}).items():
        table.add_row(f"pairs: {name}", *([""] * (len(languages) - 1)), percent_ci(estimate))  # all languages
    return table


def tables(metadata: dict[str, Any]) -> list[Table]:
    return [
        accuracy_rows(cell, f"{name} ({cell['n_instances']} instances)")
        for name, cell in metadata["cells"].items()
    ]
