"""No episode's answer can be read off the ones before it, on every registered env: agents that
remember the episode before (``tests/memory_adversary.py``) play through the real runner and
score what their memoryless twin scores; in the old order (the registry's, a minimal pair's
readings side by side) with one agent object for every episode, the same adversary solves
Ambiguity's pairs, and the bound fails. Stateless agents play the same episodes in any order."""

import inspect
import json

import gymnasium as gym
import numpy as np
import pytest
from memory_adversary import FirstValidTwin, InstanceMemoryAdversary, ProcessMemoryAdversary

from agents.random_agent import RandomAgent
from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval import runner
from hear_gym.eval.results import read_results

AGENTS = {"instance": InstanceMemoryAdversary, "process": ProcessMemoryAdversary, "twin": FirstValidTwin}
MARGIN = 0.05  # in return units: Ambiguity's return is 1 for a right answer, 0 otherwise


def text_accesses(env_id):
    """The transcript conditions (the adversaries read text): T, and T-nopunct where declared."""
    return [a for a in ("T", "T-nopunct") if a in family(env_id).access_conditions]


def blocks(env_id, n_blocks=3, size=20):
    """Runs of consecutive test ids from across the registry's list, where related episodes sit."""
    ids = family(env_id).item_ids("test")
    if len(ids) <= n_blocks * size:
        return tuple(ids)
    return tuple(
        i
        for start in np.linspace(0, len(ids) - size, n_blocks).astype(int)
        for i in ids[start : start + size]
    )


def default_cell_options(env_id):
    """The family's per-cell options at the env's defaults (Hear2Act: its feedback realization)."""
    parameters = inspect.signature(type(gym.make(env_id).unwrapped).__init__).parameters
    return tuple((key, parameters[key].default) for key in family(env_id).cell_options)


def play(tmp_path, env_id, access, item_ids, agents):
    ProcessMemoryAdversary.forget()
    options = default_cell_options(env_id)
    cells = tuple(Cell(name, access, options) for name in agents)
    config = RunConfig(env_id, cells, item_ids, seed=0)
    folder = tmp_path / access
    runner.run_evaluation(folder, config, agents, progress=False)
    return read_results(folder / "results.jsonl")


def score(record) -> float:
    return float(record["return"] if "return" in record else record["reward"])


def gain(records, agent) -> tuple[float, float]:
    """``agent``'s mean paired gain over the memoryless twin, and its standard error."""
    scores = {(r["agent"], r["item_id"], r["rollout"]): score(r) for r in records}
    diff = np.array([scores[key] - scores[("twin", *key[1:])] for key in scores if key[0] == agent])
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))


def within_bound(records, agent) -> bool:
    mean, se = gain(records, agent)
    return mean <= MARGIN + 2 * se


def plays(records, agent):
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in ("key", "cell", "agent")}, sort_keys=True)
        for r in records
        if r["agent"] == agent
    )


def the_old_runner(monkeypatch, shared_agent=True):
    """The runner before episodes were shuffled and agents built per episode."""
    monkeypatch.setattr(
        runner, "episode_order", lambda c: [(e, k) for e in c.item_ids for k in range(c.rollouts)]
    )
    if shared_agent:
        built = {}

        def one_agent_per_cell(self, cell):
            if cell not in built:
                built[cell] = runner._make_agent(self.agents[cell.agent], cell, self._env_options(cell))
            return built[cell]

        monkeypatch.setattr(runner._Player, "_agent", one_agent_per_cell)


def check_at_chance(tmp_path, env_id, item_ids):
    for access in text_accesses(env_id):
        records = play(tmp_path, env_id, access, item_ids, AGENTS)
        assert plays(records, "instance") == plays(records, "twin"), (
            f"{env_id}@{access}: an agent kept its memory"
        )
        assert within_bound(records, "process"), (
            f"{env_id}@{access}: the order told the adversary {gain(records, 'process')}"
        )


@pytest.mark.parametrize("env_id", env_ids())
def test_memory_adversaries_score_what_their_memoryless_twin_scores(tmp_path, env_id):
    check_at_chance(tmp_path, env_id, blocks(env_id))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", env_ids())
def test_memory_adversaries_stay_at_their_twin_on_the_whole_test_split(tmp_path, env_id):
    check_at_chance(tmp_path, env_id, tuple(family(env_id).item_ids("test")))


@pytest.mark.parametrize("access", text_accesses("hear_gym/Ambiguity-v0"))
def test_in_the_old_order_with_one_agent_the_adversary_beats_the_bound(tmp_path, monkeypatch, access):
    env_id = "hear_gym/Ambiguity-v0"
    the_old_runner(monkeypatch)
    records = play(tmp_path, env_id, access, blocks(env_id), AGENTS)
    assert not within_bound(records, "instance") and not within_bound(records, "process")
    assert plays(records, "instance") != plays(records, "twin")


@pytest.mark.parametrize("access", text_accesses("hear_gym/Ambiguity-v0"))
def test_new_agents_alone_leave_the_old_order_to_memory_kept_elsewhere(tmp_path, monkeypatch, access):
    """Each defence is needed: with a new agent per episode but the old order, memory kept on the
    class (as state in a shared resource would be) still reads the pairs off their order."""
    env_id = "hear_gym/Ambiguity-v0"
    the_old_runner(monkeypatch, shared_agent=False)
    records = play(tmp_path, env_id, access, blocks(env_id), AGENTS)
    assert plays(records, "instance") == plays(records, "twin")
    assert not within_bound(records, "process")


@pytest.mark.parametrize("env_id", env_ids())
def test_a_stateless_agent_plays_the_same_episodes_in_any_order(tmp_path, monkeypatch, env_id):
    """Per-episode seeds come from the episode id and rollout, never its place: a seeded random
    agent's records are the same shuffled, in the registry's order and reversed."""
    item_ids = blocks(env_id, n_blocks=2, size=6)
    agents = {"random": RandomAgent}
    records = {"shuffled": play(tmp_path / "shuffled", env_id, "T", item_ids, agents)}
    for name, order in (("in_order", lambda units: units), ("reversed", lambda units: units[::-1])):
        monkeypatch.setattr(
            runner,
            "episode_order",
            lambda c, o=order: o([(e, k) for e in c.item_ids for k in range(c.rollouts)]),
        )
        records[name] = play(tmp_path / name, env_id, "T", item_ids, agents)
    assert [r["item_id"] for r in records["in_order"]] == list(item_ids)
    assert [r["item_id"] for r in records["shuffled"]] != list(item_ids)
    assert len(records["shuffled"]) == len(item_ids)
    assert (
        plays(records["shuffled"], "random")
        == plays(records["in_order"], "random")
        == plays(records["reversed"], "random")
    )


def registered_text_baselines(env_id):
    """The family's registered agents that need no model, checkpoint or client and read text."""
    from hear_gym.cli.common import available_agents

    for name, entry_point in sorted(available_agents(family(env_id)).items()):
        factory = entry_point.load()
        if getattr(factory, "needs_client", False) or hasattr(factory, "from_checkpoint"):
            continue
        try:
            needed = getattr(factory(), "required_access", "T")
        except TypeError:  # built around a trained part
            continue
        if "T" in ((needed,) if isinstance(needed, str) else needed):
            yield name, factory


@pytest.mark.slow  # the Hear2Act planner takes about 10 s
@pytest.mark.parametrize("env_id", env_ids())
def test_registered_baselines_play_the_same_episodes_shuffled_as_in_order(tmp_path, monkeypatch, env_id):
    item_ids = blocks(env_id, n_blocks=2, size=10)
    agents = dict(registered_text_baselines(env_id))
    assert agents, f"{env_id} registers no text baseline"
    shuffled = play(tmp_path / "shuffled", env_id, "T", item_ids, agents)
    the_old_runner(monkeypatch, shared_agent=False)
    in_order = play(tmp_path / "in_order", env_id, "T", item_ids, agents)
    for name in agents:
        assert plays(shuffled, name) == plays(in_order, name), f"{env_id}: {name} depends on the order"
