"""Results files: ``results.jsonl`` (one episode per line) and ``metadata.json``.

Appending is crash-safe: each episode is one ``write`` of a complete line followed by a flush,
so an interrupted run leaves at most one torn line at the very end. Opening the file again
repairs only that tail; any other malformed line is an error that names the line, and nothing
already written is ever rewritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"
CONFIG_FILE = "run_config.json"
_FSYNC_EVERY = 200


class ResultsFileError(ValueError):
    """A results file is damaged somewhere other than a torn last line."""


def read_results(path: Path) -> list[dict[str, Any]]:
    """All complete episode records. A torn final line (no newline) is ignored."""
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
        records.append(record)
    return records


class ResultsWriter:
    """Append episode records, skipping keys the file already holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        existing = read_results(path)  # validates before we touch anything
        self.keys = {r["key"] for r in existing}
        if len(self.keys) != len(existing):
            raise ResultsFileError(f"{path}: duplicate episode keys")
        self._drop_torn_tail()
        self._fh = open(path, "a", encoding="utf-8")
        self._unsynced = 0

    def _drop_torn_tail(self) -> None:
        if not self.path.exists():
            return
        size = self.path.stat().st_size
        with open(self.path, "rb+") as fh:
            data = fh.read()
            keep = data.rfind(b"\n") + 1
            if keep < size:
                fh.truncate(keep)

    def write(self, record: dict[str, Any]) -> None:
        if record["key"] in self.keys:
            raise ValueError(f"episode {record['key']} is already in {self.path}")
        self._fh.write(json.dumps(record, separators=(",", ":")) + "\n")
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


def write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
