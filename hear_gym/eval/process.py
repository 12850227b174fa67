"""Worker processes that never outlive the process that started them.

A pool worker whose parent is killed (SIGKILL, OOM killer) would otherwise keep playing
episodes at full CPU until it next tries to hand back a result. ``die_with_parent`` runs in each
worker as it starts: on Linux the kernel delivers SIGKILL to it when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread polls the parent's pid.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
POLL_S = 0.2


def die_with_parent(parent_pid: int) -> None:
    if not (sys.platform.startswith("linux") and _set_parent_death_signal()):
        threading.Thread(target=_watch, args=(parent_pid,), name="die-with-parent", daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


def _set_parent_death_signal() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    os._exit(1)
