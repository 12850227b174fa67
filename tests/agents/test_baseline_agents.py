"""The paper's central asymmetry must emerge from the engine and honest agents on held-out
scenarios: concern-state access helps a lot under prosody-mediated feedback, little under
explicit feedback."""

import pytest

from agents.hear2act.baselines import StateAwareAgent, TranscriptOnlyAgent
from agents.random_agent import RandomAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate

AGENTS = {"random": RandomAgent, "transcript_only": TranscriptOnlyAgent, "state_aware": StateAwareAgent}


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    cells = tuple(
        cell(agent, access, fb)
        for fb in ("prosody", "explicit")
        for agent, access in (("transcript_only", "T"), ("state_aware", "T+S"), ("random", "T"))
    )
    config = run_config(cells=cells, item_ids=tuple(s.scenario_id for s in scenarios_for("dev")))
    return evaluate(tmp_path_factory.mktemp("run"), config, AGENTS, progress=False)


def first(summary, cell):
    return summary["cells"][cell]["metrics"]["1st%"]


def contrast(summary, name_start):
    return next(c for c in summary["contrasts"] if c["name"].startswith(name_start))["metrics"]


def test_state_access_matters_under_prosody(summary):
    gap = contrast(summary, "state_aware@T+S - transcript_only@T (prosody)")["1st%"]
    assert gap["low"] > 0.30
    premature = contrast(summary, "state_aware@T+S - transcript_only@T (prosody)")["premature closure%"]
    assert premature["high"] < -0.30


def test_state_access_matters_little_under_explicit_feedback(summary):
    gap = contrast(summary, "state_aware@T+S - transcript_only@T (explicit)")["1st%"]
    assert abs(gap["point"]) <= 0.10
    interaction = contrast(summary, "[state_aware@T+S - transcript_only@T] prosody minus explicit")
    assert interaction["1st%"]["low"] > 0.25


def test_transcript_only_is_fooled_by_reluctant_assent(summary):
    assert first(summary, "transcript_only@T/prosody")["point"] < 0.5
    assert first(summary, "transcript_only@T/explicit")["point"] > 0.8
    assert first(summary, "random@T/prosody")["point"] < 0.3
