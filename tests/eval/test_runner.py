import json

import pytest

from agents.hear2act.baselines import StateAwareAgent, TranscriptOnlyAgent
from agents.random_agent import RandomAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate, write_metadata
from hear_gym.eval.results import ResultsFileError, read_results
from hear_gym.eval.runner import run_evaluation

AGENTS = {"random": RandomAgent, "transcript_only": TranscriptOnlyAgent, "state_aware": StateAwareAgent}
FIVE = tuple(s.scenario_id for s in scenarios_for("dev")[:5])


def config(**kwargs):
    kwargs.setdefault("cells", (cell("random", "T", "prosody"), cell("state_aware", "T+S", "prosody")))
    kwargs.setdefault("item_ids", FIVE)
    kwargs.setdefault("rollouts", 2)
    return run_config(**kwargs)


def canonical(records):
    return sorted(json.dumps(r, sort_keys=True) for r in records)


def test_results_and_metadata_round_trip(tmp_path):
    metadata = evaluate(tmp_path, config(), AGENTS, progress=False)
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 20 and len({r["key"] for r in records}) == 20
    turn = records[0]["turns"][2]
    assert {
        "action",
        "user_text",
        "concern_state",
        "delivery_label",
        "option_acceptance",
        "interaction_satisfaction",
        "disclosed",
    } <= set(turn)
    on_disk = json.loads((tmp_path / "metadata.json").read_text())
    assert on_disk["cells"] == json.loads(json.dumps(metadata["cells"]))
    assert set(on_disk["provenance"]) >= {"git_commit", "packages", "env_id", "generator"}
    assert on_disk["config"]["cells"] == ["random@T/prosody", "state_aware@T+S/prosody"]
    assert "1st%" in on_disk["cells"]["state_aware@T+S/prosody"]["metrics"]


class Interrupting(RandomAgent):
    calls = 0

    def reset(self, seed=None):
        Interrupting.calls += 1
        if Interrupting.calls == 8:
            raise KeyboardInterrupt
        super().reset(seed)


def test_interrupted_run_resumes_without_loss_or_duplicates(tmp_path):
    fresh = tmp_path / "fresh"
    run_evaluation(fresh, config(), AGENTS, progress=False)
    expected = canonical(read_results(fresh / "results.jsonl"))

    resumed = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        run_evaluation(resumed, config(), {**AGENTS, "random": Interrupting}, progress=False)
    assert 0 < len(read_results(resumed / "results.jsonl")) < 20  # stopped part way
    with open(resumed / "results.jsonl", "a") as fh:  # a torn line from a killed process
        fh.write('{"key": "random@T/prosody|x|0", "turns": [')
    run_evaluation(resumed, config(), AGENTS, progress=False)
    assert canonical(read_results(resumed / "results.jsonl")) == expected
    run_evaluation(resumed, config(), AGENTS, progress=False)  # nothing left to do
    assert len(read_results(resumed / "results.jsonl")) == 20


def test_damaged_or_foreign_runs_are_refused_untouched(tmp_path):
    run_evaluation(tmp_path, config(), AGENTS, progress=False)
    with pytest.raises(ValueError, match="different configuration"):
        run_evaluation(tmp_path, config(rollouts=3), AGENTS, progress=False)
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = "garbage\n"
    damaged = "".join(lines)
    path.write_text(damaged)
    with pytest.raises(ResultsFileError, match=r"results\.jsonl:4"):
        run_evaluation(tmp_path, config(), AGENTS, progress=False)
    assert path.read_text() == damaged


def test_unfinished_run_cannot_be_reported(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        Interrupting.calls = 0
        run_evaluation(tmp_path, config(), {**AGENTS, "random": Interrupting}, progress=False)
    with pytest.raises(ValueError, match="finish the run"):
        write_metadata(tmp_path)


def test_agent_access_is_checked(tmp_path):
    bad = config(cells=(cell("state_aware", "T", "prosody"),))
    with pytest.raises(ValueError, match=r"needs access T\+S or T\+S\^ or T\+SER"):
        run_evaluation(tmp_path, bad, AGENTS, progress=False)


def test_parallel_workers_give_the_same_episodes(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    run_evaluation(one, config(), AGENTS, progress=False)
    run_evaluation(two, config(), AGENTS, progress=False, workers=2)
    assert canonical(read_results(two / "results.jsonl")) == canonical(read_results(one / "results.jsonl"))


def test_table5_pairs_each_agent_under_t_and_t_plus_s(tmp_path):
    from hear_gym.envs.hear2act.report import to_markdown

    cells = tuple(
        cell(agent, access, "prosody") for agent in ("transcript_only", "random") for access in ("T", "T+S")
    )
    metadata = evaluate(tmp_path, config(cells=cells), AGENTS, progress=False)
    rows = {row["agent"]: row for row in metadata["per_model"]}
    assert set(rows) == {"transcript_only", "random"}
    # neither agent reads the state channel, and episodes are paired: the difference is exactly 0
    for row in rows.values():
        assert row["delta"]["1st%"]["point"] == 0.0
        assert row["T"]["1st%"] == row["T+S"]["1st%"]
    assert "T vs T+S per model" in to_markdown(metadata)


def test_agents_with_configure_are_told_their_cells_env_options(tmp_path):
    """``configure(env_options)`` is called on every agent the runner builds (one per episode)
    with what ``gym.make`` gets beyond the access condition (the run's env kwargs and the cell's
    options); an agent without it plays exactly as in a run where no agent has it."""
    told = []

    class ConfiguredRandomAgent(RandomAgent):
        def configure(self, env_options):
            told.append(dict(env_options))

    run = config(
        cells=(cell("random", "T", "prosody"), cell("told", "T", "prosody"), cell("told", "T", "explicit")),
        turn_cost=0.2,
    )
    run_evaluation(tmp_path / "told", run, {**AGENTS, "told": ConfiguredRandomAgent}, progress=False)
    episodes = len(run.item_ids) * run.rollouts
    told_once = [{**dict(run.env_kwargs), "feedback": feedback} for feedback in ("prosody", "explicit")]
    assert sorted(told, key=str) == sorted(told_once * episodes, key=str)
    assert told[0]["turn_cost"] == 0.2

    alone = config(cells=(cell("random", "T", "prosody"),), turn_cost=0.2)
    run_evaluation(tmp_path / "alone", alone, AGENTS, progress=False)
    plain = [r for r in read_results(tmp_path / "told" / "results.jsonl") if r["agent"] == "random"]
    assert canonical(plain) == canonical(read_results(tmp_path / "alone" / "results.jsonl"))
