"""The runner plays episodes in an order shuffled by the run seed, each with a new agent, in every
backend; a resumed run keeps that order and loses or repeats nothing."""

import json

import pytest
from memory_adversary import FirstValidTwin, InstanceMemoryAdversary

from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import episode_order, run_evaluation

AMBIGUITY = "hear_gym/Ambiguity-v0"
PAIRS = tuple(family(AMBIGUITY).item_ids("test")[:16])  # eight minimal pairs, /a before /b


def config(seed=0, rollouts=2, cells=("twin@T-nopunct",)):
    return RunConfig(AMBIGUITY, tuple(Cell.parse(c) for c in cells), PAIRS, rollouts=rollouts, seed=seed)


def keys(path):
    return [r["key"] for r in read_results(path / "results.jsonl")]


def plays(records, agent):
    """What each episode of ``agent``'s cell played, without the fields naming the cell."""
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in ("key", "cell", "agent")}, sort_keys=True)
        for r in records
        if r["agent"] == agent
    )


def test_the_order_is_a_shuffle_fixed_by_the_seed():
    in_order = [(e, k) for e in PAIRS for k in range(2)]
    order = episode_order(config())
    assert sorted(order) == sorted(in_order) and len(set(order)) == len(order)
    assert order == episode_order(config()) and order != in_order
    assert episode_order(config(seed=1)) != order
    # no unit's place depends on which others are in the run: a subset keeps its relative order
    half = RunConfig(AMBIGUITY, config().cells, PAIRS[::2], rollouts=2)
    assert episode_order(half) == [unit for unit in order if unit[0] in PAIRS[::2]]


def test_results_are_played_in_that_order(tmp_path):
    run_evaluation(tmp_path, config(), {"twin": FirstValidTwin}, progress=False)
    assert keys(tmp_path) == [f"twin@T-nopunct|{e}|{k}" for e, k in episode_order(config())]


class Interrupting(FirstValidTwin):
    calls = 0

    def reset(self, seed=None):
        Interrupting.calls += 1
        if Interrupting.calls == 12:
            raise KeyboardInterrupt
        super().reset(seed)


def test_an_interrupted_run_resumes_in_its_order_without_loss_or_duplicates(tmp_path):
    fresh, resumed = tmp_path / "fresh", tmp_path / "resumed"
    run_evaluation(fresh, config(), {"twin": FirstValidTwin}, progress=False)
    Interrupting.calls = 0
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(resumed, config(), {"twin": Interrupting}, progress=False)
    assert keys(resumed) == keys(fresh)[:11]  # the first eleven of the shuffled order
    with open(resumed / "results.jsonl", "a") as fh:  # a torn line from a killed process
        fh.write('{"key": "twin@T-nopunct|x|0", "turn": [')
    run_evaluation(resumed, config(), {"twin": FirstValidTwin}, progress=False)
    assert keys(resumed) == keys(fresh)  # the rest, in the same order, each once
    assert read_results(resumed / "results.jsonl") == read_results(fresh / "results.jsonl")
    run_evaluation(resumed, config(), {"twin": FirstValidTwin}, progress=False)  # nothing left
    assert len(keys(resumed)) == 2 * len(PAIRS)


BOTH = ("adversary@T-nopunct", "twin@T-nopunct")
AGENTS = {"adversary": InstanceMemoryAdversary, "twin": FirstValidTwin}


@pytest.mark.parametrize(
    "play",
    [{}, {"batch_size": 4}, pytest.param({"workers": 2}, marks=pytest.mark.slow)],  # spawning: about 8 s
    ids=["one_player", "batched", "two_processes"],
)
def test_every_episode_is_played_by_a_new_agent(tmp_path, play):
    """An adversary that would answer from its memory of the episode before plays every episode
    exactly as its memoryless twin does: its memory is always empty."""
    run_evaluation(tmp_path, config(cells=BOTH), AGENTS, progress=False, **play)
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 2 * 2 * len(PAIRS)
    assert plays(records, "adversary") == plays(records, "twin")


def test_the_ray_backend_plays_the_same_episodes_with_new_agents(tmp_path):
    pytest.importorskip("ray")
    run_evaluation(tmp_path / "local", config(cells=BOTH), AGENTS, progress=False)
    run_evaluation(tmp_path / "ray", config(cells=BOTH), AGENTS, progress=False, workers=2, backend="ray")
    local, ray = (read_results(tmp_path / name / "results.jsonl") for name in ("local", "ray"))
    assert sorted(map(json.dumps, ray)) == sorted(map(json.dumps, local))
    assert plays(ray, "adversary") == plays(ray, "twin")
