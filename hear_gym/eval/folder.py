"""An evaluation's hold on its run folder: one writer per folder, taken once per process.

Several layers write into an evaluation's folder (the runner its results, the pipeline the
metadata, the CLI the tables and the W&B run). Each holds the folder's lock
(``hear_gym.core.run_folder.run_folder_lock``) so that each is safe alone; nested holds in one
thread share the outermost one, which keeps the folder for the whole evaluation. Another process,
or another thread, is refused with ``RunFolderBusy``.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hear_gym.core.run_folder import run_folder_lock
from hear_gym.eval.results import RESULTS_FILE

_holders: dict[Path, int] = {}  # folder -> the thread that holds its lock


@contextmanager
def writing_into(folder: Path) -> Iterator[Path]:
    """Hold ``folder``'s writer lock for the block (created if missing). A folder the outermost
    hold created is removed again when the block fails before any episode was written, so a
    refused run leaves nothing behind."""
    folder = Path(folder)
    key = folder.resolve()
    if _holders.get(key) == threading.get_ident():
        yield folder
        return
    created = not folder.exists()
    with run_folder_lock(folder):
        _holders[key] = threading.get_ident()
        try:
            yield folder
        except BaseException:
            results = folder / RESULTS_FILE
            if created and not (results.exists() and results.stat().st_size):
                shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            del _holders[key]
