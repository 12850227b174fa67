"""Rows of a trainer's ``curve.jsonl``: strict JSON, so a metric with nothing to count is null.

A run killed while it appended may leave a torn last line (no newline at its end): it is skipped
when the curve is read and cut off when the run resumes (``kept_rows``, which also keeps only the
rows up to the resume point; ``clear_after`` removes the outputs made after it). A damaged line
anywhere else is an error that names the file and the line."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hear_gym.core.run_folder import strict_json, write_text_atomic


def finite(value):
    """NaN and infinities as JSON null, in nested dicts too."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    return value


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of the curve at ``path`` (none if it is missing), without a torn last line;
    ``ValueError`` naming the file and line for any other line that is not a JSON object."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines):  # the last line, not ended by a newline: a torn append
                break
            raise ValueError(
                f"{path}:{number}: not a JSON row ({exc.msg}); the curve is damaged: "
                "repair or remove that line, or train into a new folder"
            ) from None
        if not isinstance(row, dict) or not {"step", "kind"} <= row.keys():
            raise ValueError(f"{path}:{number}: not a curve row (a JSON object with a step and a kind)")
        rows.append(row)
    return rows


def kept_rows(path: Path, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Rewrite the curve at ``path`` with only the rows ``keep`` accepts (a torn last line goes
    too), atomically; the rows kept."""
    rows = [row for row in read_rows(path) if keep(row)]
    write_text_atomic(path, "".join(strict_json(row) + "\n" for row in rows))
    return rows


STEP_PREFIX = "step_"


def clear_after(out: Path, step: int, names: tuple[str, ...]) -> None:
    """Remove the outputs of an interrupted run made after ``step``: checkpoint and evaluation
    folders ``step_M`` with M > ``step``, and those called ``final`` or ``base`` (made after
    training), under each of ``names``."""
    for name in names:
        for folder in (out / name).glob("*"):
            number = folder.name[len(STEP_PREFIX) :]
            later = folder.name.startswith(STEP_PREFIX) and number.isdigit() and int(number) > step
            if later or folder.name in ("final", "base"):
                shutil.rmtree(folder)
