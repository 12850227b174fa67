"""Aggregate a results folder into metrics with scenario-level bootstrap CIs, and print them.

Default contrasts, all paired over scenarios: within each feedback realization, every cell minus
the first cell of that realization; and, when both realizations were run, the difference of
those differences (prosody minus explicit), the paper's asymmetry test.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text  # plain text cells: names contain [brackets] rich would parse

from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.tables import print_tables
from hear_gym.core.tables import to_markdown as tables_markdown
from hear_gym.envs.hear2act.metrics import METRICS, METRICS_BY_NAME, OUTCOME_METRICS, scenario_sums
from hear_gym.stats.bootstrap import contrast_ci, ratio_ci

CONTRAST_METRICS = ("1st%", "OptSat%", "SvcSat%", "premature closure%", "full disclosure%", "return")
PER_MODEL_METRICS = ("1st%", "OptSat%", "SvcSat%")


def summarize(records: Sequence[dict[str, Any]], config: RunConfig) -> dict[str, Any]:
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_cell[record["cell"]].append(record)
    item_ids = list(config.item_ids)
    sums = {}
    cells: dict[str, Any] = {}
    for cell in config.cells:
        episodes = by_cell.get(cell.name, [])
        expected = len(item_ids) * config.rollouts
        if len(episodes) != expected:
            raise ValueError(
                f"{cell.name}: {len(episodes)} of {expected} episodes; "
                f"finish the run (it resumes) before reporting"
            )
        sums[cell] = {m.name: scenario_sums(episodes, item_ids, m) for m in METRICS}
        cells[cell.name] = {
            "agent": cell.agent,
            "access": cell.access,
            "feedback": cell.option("feedback"),
            "n_episodes": len(episodes),
            "metrics": {name: ratio_ci(s).as_dict() for name, s in sums[cell].items()},
        }
    return {
        "cells": cells,
        "contrasts": _contrasts(config.cells, sums),
        "per_model": _per_model(config.cells, sums),
    }


def _per_model(cells: Sequence[Cell], sums) -> list[dict[str, Any]]:
    """Paper Table 5: each agent (model) under T and T+S on the same scenarios, with the paired
    difference, per feedback realization."""
    by_key = {(c.agent, c.access, c.option("feedback")): c for c in cells}
    rows = []
    for cell in cells:
        with_state = by_key.get((cell.agent, "T+S", cell.option("feedback")))
        if cell.access != "T" or with_state is None:
            continue
        rows.append(
            {
                "agent": cell.agent,
                "feedback": cell.option("feedback"),
                "T": {m: ratio_ci(sums[cell][m]).as_dict() for m in PER_MODEL_METRICS},
                "T+S": {m: ratio_ci(sums[with_state][m]).as_dict() for m in PER_MODEL_METRICS},
                "delta": _contrast("", [(1.0, with_state), (-1.0, cell)], sums)["metrics"],
            }
        )
    return rows


def _contrasts(cells: Sequence[Cell], sums) -> list[dict[str, Any]]:
    by_feedback: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        by_feedback[cell.option("feedback")].append(cell)
    out = []
    for feedback, group in by_feedback.items():
        for cell in group[1:]:
            out.append(
                _contrast(
                    f"{_label(cell)} - {_label(group[0])} ({feedback})", [(1.0, cell), (-1.0, group[0])], sums
                )
            )
    prosody, explicit = by_feedback.get("prosody", []), by_feedback.get("explicit", [])
    explicit_by_label = {_label(c): c for c in explicit}
    if prosody and explicit and _label(prosody[0]) in explicit_by_label:
        e0 = explicit_by_label[_label(prosody[0])]
        for cell in prosody[1:]:
            e1 = explicit_by_label.get(_label(cell))
            if e1 is not None:
                out.append(
                    _contrast(
                        f"[{_label(cell)} - {_label(prosody[0])}] prosody minus explicit",
                        [(1.0, cell), (-1.0, prosody[0]), (-1.0, e1), (1.0, e0)],
                        sums,
                    )
                )
    return out


def _contrast(name: str, terms, sums) -> dict[str, Any]:
    return {
        "name": name,
        "terms": [[w, c.name] for w, c in terms],
        "metrics": {m: contrast_ci([(w, sums[c][m]) for w, c in terms]).as_dict() for m in CONTRAST_METRICS},
    }


def _label(cell: Cell) -> str:
    return f"{cell.agent}@{cell.access}"


def _fmt(est: dict, metric: str, signed: bool = False) -> str:
    spec = METRICS_BY_NAME[metric]
    scale = 100 if spec.percent else 1
    form = f"{'+' if signed else ''}.{spec.decimals}f"
    return f"{scale * est['point']:{form}} [{scale * est['low']:{form}}, {scale * est['high']:{form}}]"


def outcome_table(
    summary: dict[str, Any],
    metrics: Sequence[str] = (
        *OUTCOME_METRICS,
        "premature closure%",
        "concerns disclosed",
        "dialogue length",
        "ask share",
        "return",
    ),
) -> Table:
    table = Table(title="Hear2Act outcomes (95% scenario-bootstrap CIs)")
    for col in ("feedback", "agent", "access", "n", *metrics):
        table.add_column(col, justify="right" if col not in ("feedback", "agent", "access") else "left")
    for cell in summary["cells"].values():
        table.add_row(
            cell["feedback"],
            cell["agent"],
            cell["access"],
            str(cell["n_episodes"]),
            *(_fmt(cell["metrics"][m], m) for m in metrics),
        )
    return table


def contrast_table(summary: dict[str, Any]) -> Table:
    table = Table(title="Paired contrasts (points, 95% scenario-bootstrap CIs)")
    table.add_column("contrast")
    for metric in CONTRAST_METRICS:
        table.add_column(metric, justify="right")
    for contrast in summary["contrasts"]:
        table.add_row(
            Text(contrast["name"]), *(_fmt(contrast["metrics"][m], m, signed=True) for m in CONTRAST_METRICS)
        )
    return table


def per_model_table(summary: dict[str, Any]) -> Table:
    table = Table(title="T vs T+S per model (paper Table 5; paired difference, 95% CIs)")
    for col in ("feedback", "agent"):
        table.add_column(col)
    for metric in PER_MODEL_METRICS:
        for part in ("T", "T+S", "delta"):
            table.add_column(f"{metric} {part}", justify="right")
    for row in summary.get("per_model", []):
        table.add_row(
            row["feedback"],
            row["agent"],
            *(
                _fmt(row[part][m], m, signed=part == "delta")
                for m in PER_MODEL_METRICS
                for part in ("T", "T+S", "delta")
            ),
        )
    return table


def tables(summary: dict[str, Any]) -> list[Table]:
    """The run's tables (``summary`` is ``metadata.json`` or ``summarize``'s output)."""
    out = [outcome_table(summary)]
    if summary.get("per_model"):
        out.append(per_model_table(summary))
    if summary["contrasts"]:
        out.append(contrast_table(summary))
    return out


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    print_tables(tables(summary), console)


def to_markdown(summary: dict[str, Any]) -> str:
    """The same tables as Markdown, ready to paste into a study page."""
    return tables_markdown(tables(summary))
