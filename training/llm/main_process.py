"""Which process of a distributed launch (torchrun, accelerate launch) writes a run, and work it
does alone while the others wait for it.

Every process trains; one, the main process (``RANK`` 0, or no launch at all), writes the run
folder, W&B and the evaluations. ``MainProcessWork`` runs such work mid-training (saving and
playing a checkpoint) without a collective of the training timing out meanwhile. Imports only
the standard library until a process group exists, so it is cheap to import in every process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any


def main_process() -> bool:
    """True unless this is a non-zero rank of a distributed launch (torchrun, accelerate launch):
    one process writes the run folder, W&B and the evaluations; every process trains."""
    return int(os.environ.get("RANK", "0")) == 0


class MainProcessWork:
    """Work the main process alone does while training is paused (saving and playing a
    checkpoint), safe under a distributed launch (torchrun, accelerate launch): the other processes
    wait for it at a barrier of a gloo group made for the wait, with a timeout of its own
    (``timeout``), so neither a collective of the training (NCCL's default timeout is 10 minutes)
    nor one of them runs while the main process evaluates. ``start()`` makes the group; every
    process calls it, before training (making a group is itself collective)."""

    def __init__(self, timeout: timedelta = timedelta(hours=12)) -> None:
        self.timeout, self.group = timeout, None

    def start(self) -> None:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1 and self.group is None:
            self.group = dist.new_group(backend="gloo", timeout=self.timeout)

    def run(self, work: Callable[[], Any]) -> None:
        """``work()`` on the main process; every process returns once it is done."""
        try:
            if main_process():
                work()
        finally:
            if self.group is not None:
                import torch.distributed as dist

                dist.barrier(group=self.group)
