"""Another process holding a run folder's lock, for the tests of the one-writer rule."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLD = textwrap.dedent(
    """
    import sys, time
    from hear_gym.core.run_folder import run_folder_lock
    with run_folder_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(120)
    """
)


def start_holder(folder: Path) -> subprocess.Popen:
    """A process that holds ``folder``'s lock (created if missing) until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@contextmanager
def lock_held_elsewhere(folder: Path) -> Iterator[subprocess.Popen]:
    proc = start_holder(folder)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()
