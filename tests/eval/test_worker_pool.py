"""One WorkerPool shared by several evaluations: the same records as evaluations played on their
own, from the same started workers."""

import json
import os
from pathlib import Path

import pytest

from agents.hear2act.baselines import StateAwareAgent, TranscriptOnlyAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.pool import WorkerPool
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import run_evaluation

FOUR = tuple(s.scenario_id for s in scenarios_for("dev")[:4])


class PidNotingAgent(StateAwareAgent):
    """Leaves ``built-<pid>`` in ``$POOL_TEST_MARKERS``: which processes built agents."""

    def __init__(self) -> None:
        super().__init__()
        (Path(os.environ["POOL_TEST_MARKERS"]) / f"built-{os.getpid()}").touch()


AGENTS = {"state_aware": PidNotingAgent, "transcript_only": TranscriptOnlyAgent}
CONFIGS = (  # two evaluations with different cells and env options, as a grid's runs differ
    run_config(
        cells=(cell("state_aware", "T+S", "prosody"), cell("transcript_only", "T", "explicit")),
        item_ids=FOUR,
    ),
    run_config(cells=(cell("state_aware", "T+S", "prosody"),), item_ids=FOUR, state_intervention="shuffled"),
)


def canonical(folder):
    return sorted(json.dumps(r, sort_keys=True) for r in read_results(folder / "results.jsonl"))


@pytest.mark.slow  # spawns two workers: about 8 s on the shared 2-core machine
def test_a_shared_pool_gives_the_records_of_evaluations_played_alone(tmp_path, monkeypatch):
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv("POOL_TEST_MARKERS", str(markers))
    for i, config in enumerate(CONFIGS):
        run_evaluation(tmp_path / f"alone{i}", config, AGENTS, progress=False)
    alone_pids = {p.name for p in markers.iterdir()}
    with WorkerPool(2) as pool:
        for i, config in enumerate(CONFIGS):
            evaluate(tmp_path / f"pooled{i}", config, AGENTS, progress=False, pool=pool)
    pool_pids = {p.name for p in markers.iterdir()} - alone_pids
    for i in range(len(CONFIGS)):
        assert canonical(tmp_path / f"pooled{i}") == canonical(tmp_path / f"alone{i}")
    assert 1 <= len(pool_pids) <= 2, "the evaluations did not share the pool's two workers"
    assert f"built-{os.getpid()}" not in pool_pids


def test_a_closed_pool_or_ray_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="not open"):
        run_evaluation(tmp_path / "closed", CONFIGS[0], AGENTS, progress=False, pool=WorkerPool(2))
    with pytest.raises(ValueError, match="workers"):
        WorkerPool(0)
