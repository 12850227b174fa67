"""The Python evaluation API with your own agent object: no entry point, no CLI."""

import json

from agents.example_agent import AskOnceAgent
from hear_gym.eval import Cell, RunConfig, evaluate, read_results

SCENARIOS = ("budget_airline_tickets-00", "meditation_apps-01", "wine_club_memberships-02")


def _config(**env_kwargs):
    cells = tuple(Cell(agent, "T", (("feedback", "prosody"),)) for agent in ("mine", "mine_again"))
    return RunConfig("hear_gym/Hear2Act-v0", cells, SCENARIOS, env_kwargs=tuple(sorted(env_kwargs.items())))


def test_an_agent_class_and_an_agent_object_play_through_evaluate(tmp_path):
    shared = AskOnceAgent()
    metadata = evaluate(
        str(tmp_path),
        _config(turn_cost=0.1),
        {"mine": AskOnceAgent, "mine_again": lambda: shared},
        progress=False,
    )
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 2 * len(SCENARIOS)
    assert set(metadata["cells"]) == {"mine@T/prosody", "mine_again@T/prosody"}
    assert json.loads((tmp_path / "metadata.json").read_text()) == metadata
    assert shared.turn_cost == 0.1  # configure() received the run's env options
    # the class and the object are the same policy: the paired episodes match turn for turn
    by_agent = {a: [r["turns"] for r in records if r["agent"] == a] for a in ("mine", "mine_again")}
    assert by_agent["mine"] == by_agent["mine_again"]
