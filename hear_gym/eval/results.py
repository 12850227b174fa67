"""Results files: ``results.jsonl`` (one episode per line) and ``metadata.json``.

Appending is crash-safe: each episode is one ``write`` of a complete line followed by a flush,
so an interrupted run leaves at most one torn line at the very end. Opening the file again
repairs only that tail; any other malformed line is an error that names the line, and nothing
already written is ever rewritten. A key that appears twice (two writers in one folder) is an
error that counts them, so no report double-counts an episode. Lines are strict JSON, and the
file is never written through a symbolic link planted in its place.

Rows of the previous release read in today's form (``current_record``): the item an episode was
drawn from under ``item_id`` (it was ``episode_id``, and Hear2Act's own ``scenario_id``), and a
family's renamed record fields (``EnvFamily.renamed_record_fields``) under their new names.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hear_gym.core.run_folder import open_append, strict_json

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"
CONFIG_FILE = "run_config.json"
_FSYNC_EVERY = 200
# the fields rows of the previous release named the item by; read as "item_id" for one release
PREVIOUS_ITEM_FIELDS = ("episode_id", "scenario_id", "case_id")


class ResultsFileError(ValueError):
    """A results file is damaged somewhere other than a torn last line."""


def current_record(record: dict[str, Any], renamed: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """``record`` under today's field names: an older row's ``PREVIOUS_ITEM_FIELDS`` become
    ``item_id``, and each ``(old, new)`` of ``renamed`` (a family's renamed record fields) becomes
    ``new``. A row already in today's form comes back unchanged."""
    current = dict(record)
    for old, new in (*((old, "item_id") for old in PREVIOUS_ITEM_FIELDS), *renamed):
        if old in current:
            current.setdefault(new, current.pop(old))
    return current


def read_results(path: Path, renamed: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """All complete episode records, in today's form (``current_record``, with a family's
    ``renamed`` record fields). A torn final line (no newline) is ignored."""
    records: list[dict[str, Any]] = []
    if not path.exists():
        return records
    data = path.read_bytes()
    complete, _, _tail = data.rpartition(b"\n")
    for lineno, line in enumerate(complete.split(b"\n") if complete else [], start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsFileError(f"{path}:{lineno}: not a JSON episode record ({exc.msg})") from exc
        if not isinstance(record, dict) or "key" not in record:
            raise ResultsFileError(f"{path}:{lineno}: episode record without a 'key'")
        records.append(current_record(record, renamed))
    _refuse_duplicates(path, records)
    return records


def _refuse_duplicates(path: Path, records: list[dict[str, Any]]) -> None:
    counts = Counter(r["key"] for r in records)
    repeated = {key: n for key, n in counts.items() if n > 1}
    if repeated:
        example = next(iter(repeated))
        raise ResultsFileError(
            f"{path}: {sum(repeated.values()) - len(repeated)} duplicate episode record(s) over "
            f"{len(repeated)} key(s) (e.g. {example!r} x{repeated[example]}): two runs wrote into "
            f"this folder; keep one line per key or rerun into a new folder"
        )


def undefined_as_null(value: Any) -> Any:
    """``value`` with every NaN or infinite float (an aggregate with no defined value, such as a
    mean over zero episodes) replaced by ``None``, so it can be written as strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: undefined_as_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [undefined_as_null(v) for v in value]
    return value


class ResultsWriter:
    """Append episode records, skipping keys the file already holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = open_append(path)  # refuses a symbolic link planted in its place
        try:
            existing = read_results(path)  # validates before we touch anything
            self._drop_torn_tail()
        except BaseException:
            self._fh.close()
            raise
        self.keys = {r["key"] for r in existing}
        self._unsynced = 0

    def _drop_torn_tail(self) -> None:
        """Truncate through the descriptor opened above, never through a path a link may follow."""
        size = os.fstat(self._fh.fileno()).st_size
        with open(self.path, "rb") as fh:
            keep = fh.read().rfind(b"\n") + 1
        if keep < size:
            os.ftruncate(self._fh.fileno(), keep)

    def write(self, record: dict[str, Any]) -> None:
        if record["key"] in self.keys:
            raise ValueError(f"episode {record['key']} is already in {self.path}")
        try:
            line = strict_json(record, separators=(",", ":"))
        except ValueError:
            raise ValueError(
                f"episode {record['key']}: its record holds NaN or infinity, which {self.path} "
                f"(strict JSON) cannot hold"
            ) from None
        self._fh.write(line + "\n")
        self._fh.flush()
        self.keys.add(record["key"])
        self._unsynced += 1
        if self._unsynced >= _FSYNC_EVERY:
            os.fsync(self._fh.fileno())
            self._unsynced = 0

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
