"""The Python evaluation API with your own agent: no entry point, no CLI."""

import json

import pytest

from agents.example_agent import AskOnceAgent
from hear_gym.eval import Cell, RunConfig, evaluate, read_results

SCENARIOS = ("budget_airline_tickets-00", "meditation_apps-01", "wine_club_memberships-02")


def _config(*agents, **env_kwargs):
    cells = tuple(Cell(agent, "T", (("feedback", "prosody"),)) for agent in agents)
    return RunConfig("hear_gym/Hear2Act-v0", cells, SCENARIOS, env_kwargs=tuple(sorted(env_kwargs.items())))


def test_an_agent_class_and_a_factory_play_through_evaluate(tmp_path):
    built = []

    def factory():  # what a factory closing over a shared resource (a model) looks like
        built.append(AskOnceAgent())
        return built[-1]

    metadata = evaluate(
        str(tmp_path),
        _config("mine", "mine_again", turn_cost=0.1),
        {"mine": AskOnceAgent, "mine_again": factory},
        progress=False,
    )
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 2 * len(SCENARIOS)
    assert set(metadata["cells"]) == {"mine@T/prosody", "mine_again@T/prosody"}
    assert json.loads((tmp_path / "metadata.json").read_text()) == metadata
    # a new agent for every episode, each told the run's env options by configure()
    assert len(built) == len(SCENARIOS) and all(agent.turn_cost == 0.1 for agent in built)
    # the class and the factory are the same policy: the paired episodes match turn for turn
    by_agent = {
        a: sorted((r["item_id"], r["turns"]) for r in records if r["agent"] == a)
        for a in ("mine", "mine_again")
    }
    assert by_agent["mine"] == by_agent["mine_again"]


def test_a_factory_that_hands_out_one_agent_object_is_refused(tmp_path):
    shared = AskOnceAgent()
    with pytest.raises(ValueError, match="returned an agent it returned before"):
        evaluate(str(tmp_path), _config("shared"), {"shared": lambda: shared}, progress=False)
