"""One writer per run folder.

Evaluations and training runs append to files in their folder (``results.jsonl``,
``curve.jsonl``, checkpoints). Two processes writing into one folder would interleave those files,
so each run holds an exclusive advisory lock on ``<folder>/.lock`` while it writes. The lock is
released by the operating system when the process ends, however it ends, so a killed run never
leaves a stale lock behind and can always be resumed.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".lock"


class RunFolderBusy(RuntimeError):
    """Another process is writing into the run folder."""


@contextmanager
def run_folder_lock(folder: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``folder`` (created if missing) for the ``with`` block.

    Raises :class:`RunFolderBusy` at once, without waiting, when another process holds it. The
    lock file is opened without following a symbolic link planted in its place."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise RunFolderBusy(f"{folder}: cannot open its lock file {path.name} ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderBusy(
                f"{folder} is in use by another run (it holds {path.name}); "
                f"wait for it to finish or choose another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield folder
    finally:
        os.close(fd)  # closing the descriptor releases the lock


__all__ = ["LOCK_FILE", "RunFolderBusy", "run_folder_lock"]
