"""One table type for every output: families lay their results out as ``rich`` tables, and the
console, Markdown and W&B all read those."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table


def rows(table: Table) -> list[list[str]]:
    """The table's cells as plain strings, row by row."""
    return [[str(v) for v in row] for row in zip(*[list(c.cells) for c in table.columns], strict=True)]


def print_tables(tables: Sequence[Table], console: Console | None = None) -> None:
    console = console or Console()
    for table in tables:
        console.print(table)


def to_markdown(tables: Sequence[Table]) -> str:
    """The same tables as Markdown, ready to paste into a results page."""
    lines: list[str] = []
    for table in tables:
        headers = [str(c.header) for c in table.columns]
        body = rows(table)
        if not body:
            continue
        lines += [
            f"**{table.title}**",
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        lines.append("")
    return "\n".join(lines)


def percent_ci(estimate: dict | None) -> str:
    """An estimate dict (``point``, ``low``, ``high`` as fractions) as "12.3 [10.1, 14.5]"; "-"
    for a missing one or one with nothing to count."""
    if estimate is None or estimate["point"] is None:
        return "-"
    return f"{100 * estimate['point']:.1f} [{100 * estimate['low']:.1f}, {100 * estimate['high']:.1f}]"
