"""``hear-gym view``: evaluation run folders as one self-contained HTML page (``hear_gym.eval.viewer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hear_gym.cli.common import console, fail


def view_command(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Evaluation run folders (results.jsonl, run_config.json).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="The HTML file to write [default: RUN_DIR/episodes.html, the first run's]."),
    ] = None,
    per_cell: Annotated[
        int, typer.Option(min=0, help="Episodes of each cell shown turn by turn, with their audio.")
    ] = 5,
) -> None:
    """Write one HTML page (no network needed: inline script, audio as data: URIs) with a run's
    cells (mean return, 95% CI) and, for the first --per-cell episodes of each cell, every turn:
    what the agent observed and heard, its reply, the reward and the return so far."""
    from hear_gym.eval.viewer import write_view

    target = out if out is not None else run_dirs[0] / "episodes.html"
    try:
        written = write_view(run_dirs, target, per_cell)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    console.print(f"wrote {written}")
