"""Spawned worker processes that several evaluations share (``WorkerPool``).

A grid runs several evaluations one after another. Started once, the workers import torch, the
speech layer and the rest once instead of once per evaluation, and keep their per-process caches
(renderings, features) between evaluations. Each evaluation hands the pool a player factory
(a picklable zero-argument callable whose result has ``play_chunk`` and ``close``); it is pickled
once into the pool's private folder, and a worker builds a fresh player from it when it first
gets one of that evaluation's chunks, as a pool started for that evaluation alone would.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from hear_gym.eval.process import die_with_parent


class WorkerPool:
    """``with WorkerPool(2) as pool: evaluate(..., pool=pool)`` for each run of a grid. Serves
    one evaluation at a time."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.workers = workers
        self._evaluations = itertools.count()
        self._pool = None
        self._folder: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> WorkerPool:
        context = multiprocessing.get_context("spawn")  # eSpeak and torch hold process state
        self._folder = tempfile.TemporaryDirectory(prefix="hear_gym_pool_")
        self._pool = context.Pool(self.workers, initializer=die_with_parent, initargs=(os.getpid(),))
        return self

    def __exit__(self, *exc) -> None:
        self._pool.terminate()
        self._pool.join()
        self._folder.cleanup()
        self._pool = self._folder = None

    def play(self, chunks: Iterable[Any], make_player: Callable[[], Any]) -> Iterator[dict[str, Any]]:
        """Each chunk's records from ``make_player()``'s ``play_chunk``, in completion order."""
        if self._pool is None:
            raise RuntimeError("WorkerPool is not open: use it as a context manager")
        setup = Path(self._folder.name) / f"evaluation-{next(self._evaluations)}.pickle"
        setup.write_bytes(pickle.dumps(make_player))
        try:
            tasks = ((str(setup), chunk) for chunk in chunks)
            for records in self._pool.imap_unordered(_play_in_worker, tasks):
                yield from records
        finally:
            setup.unlink()


_WORKER_PLAYER: tuple[str, Any] | None = None  # (setup file, its player) in a pool worker


def _play_in_worker(task: tuple[str, Any]) -> list[dict[str, Any]]:
    global _WORKER_PLAYER
    setup, chunk = task
    if _WORKER_PLAYER is None or _WORKER_PLAYER[0] != setup:
        if _WORKER_PLAYER is not None:
            _WORKER_PLAYER[1].close()
        with open(setup, "rb") as fh:
            _WORKER_PLAYER = (setup, pickle.load(fh)())
    return _WORKER_PLAYER[1].play_chunk(chunk)
