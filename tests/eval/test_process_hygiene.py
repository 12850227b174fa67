"""Evaluation workers die with their parent (SIGKILL of the parent leaves nothing running)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from slow_agent import SlowRandomAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.eval.runner import run_evaluation
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
config = run_config(cells=(cell("slow", "T", "prosody"),),
                   item_ids=tuple(s.scenario_id for s in scenarios_for("train")[:4]), rollouts=30)
run_evaluation(Path({out!r}), config, {{"slow": SlowRandomAgent}}, progress=False, workers=2)
"""


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_when_the_parent_is_killed(tmp_path):
    code = PARENT.format(tests=str(Path(__file__).parents[1]), out=str(tmp_path / "run"))
    parent = subprocess.Popen(
        [sys.executable, "-c", code], env={**os.environ, "SLOW_AGENT_MARKERS": str(tmp_path)}
    )
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while time.monotonic() < deadline and parent.poll() is None and len(workers) < 2:
            workers = [int(p.name.split("-")[1]) for p in tmp_path.glob("started-*")]
            time.sleep(0.2)
        assert len(workers) == 2, "the evaluation did not start its two workers"
        assert set(workers) <= set(_children(parent.pid))
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 2  # a worker's chunk (one scenario, 30 rollouts) takes ~30 s
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers)
    finally:
        if parent.poll() is None:
            parent.kill()
