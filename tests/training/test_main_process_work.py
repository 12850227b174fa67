"""Mid-training evaluation under a distributed launch: the main process evaluates while the other
processes wait for it at a barrier of their own (``MainProcessWork``), so no collective of the
training times out meanwhile. Two CPU processes on gloo, the default group's timeout 1 s, the
main process's work 3 s: without the wait the other process's next collective times out."""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import timedelta

import pytest
import torch.multiprocessing as mp

WORK_SECONDS, TIMEOUT = 3.0, timedelta(seconds=1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _process(rank: int, port: int, out: str, wait: bool) -> None:
    import torch
    import torch.distributed as dist

    from training.llm.main_process import MainProcessWork

    os.environ["RANK"] = str(rank)  # how main_process() knows the main process, as under torchrun
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2, timeout=TIMEOUT
    )
    work = MainProcessWork(timeout=timedelta(seconds=60))
    work.start()
    result = {"worked": False}

    def evaluate() -> None:
        time.sleep(WORK_SECONDS)
        result["worked"] = True

    try:
        if wait:
            work.run(evaluate)
        elif rank == 0:  # the old callback: the main process evaluates, the others go on training
            evaluate()
        total = torch.ones(1)
        dist.all_reduce(total)  # the next training step's collective
        result["sum"] = float(total)
    except RuntimeError as exc:
        result["error"] = type(exc).__name__
    with open(f"{out}/{rank}.json", "w") as f:
        json.dump(result, f)
    if "error" not in result:
        dist.destroy_process_group()


def _launch(tmp_path, wait: bool) -> dict[int, dict]:
    out = tmp_path / ("wait" if wait else "no_wait")
    out.mkdir()
    context = mp.start_processes(
        _process, args=(_free_port(), str(out), wait), nprocs=2, join=False, start_method="spawn"
    )
    deadline = time.time() + 120
    while not context.join(timeout=max(1, deadline - time.time())):
        if time.time() > deadline:
            raise TimeoutError("the processes did not finish")
    return {rank: json.loads((out / f"{rank}.json").read_text()) for rank in (0, 1)}


def test_the_main_process_works_and_every_process_meets_at_the_wait(monkeypatch):
    """The logic, in one process: rank 0 does the work, another rank does not, and both reach
    the barrier of the wait's group, after the work (the two-process run below is the slow tier's)."""
    import torch.distributed as dist

    from training.llm.main_process import MainProcessWork

    events = []
    monkeypatch.setattr(dist, "barrier", lambda group=None: events.append(("barrier", group)))
    for rank in ("0", "1"):
        monkeypatch.setenv("RANK", rank)
        work = MainProcessWork()
        work.group = "the wait's group"  # what start() makes under a launch of two or more
        work.run(lambda rank=rank: events.append(("work", rank)))
    assert events == [("work", "0"), ("barrier", "the wait's group"), ("barrier", "the wait's group")]
    alone = MainProcessWork()
    alone.start()  # no process group: nothing to wait for
    assert alone.group is None


@pytest.mark.slow  # two spawned torch processes, twice: 30 s on a busy 2-core machine
@pytest.mark.filterwarnings("ignore")
def test_other_processes_wait_for_the_main_process_evaluation(tmp_path):
    waited = _launch(tmp_path, wait=True)
    assert waited[0] == {"worked": True, "sum": 2.0} and waited[1] == {"worked": False, "sum": 2.0}
    not_waited = _launch(tmp_path, wait=False)  # the failure the wait prevents is real here
    assert "error" in not_waited[1]
