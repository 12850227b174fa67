"""The references that say what listening is worth in Hear2Act: the cleverest transcript policy
(``ask_until_disclosed``) and a listener with a safety net (``ask_unless_resolved``). Under
prosody-mediated feedback with a turn cost, the transcript alone must not reach what the
concern state buys, and the safety net must cost a perfect listener nothing."""

import pytest

from agents.hear2act.baselines import (
    AskBeforeConfirmAgent,
    AskUnlessResolvedAgent,
    AskUntilDisclosedAgent,
    StateAwareAgent,
    TranscriptOnlyAgent,
)
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate

AGENTS = {
    "state_aware": StateAwareAgent,
    "ask_unless_resolved": AskUnlessResolvedAgent,
    "ask_before_confirm": AskBeforeConfirmAgent,
    "ask_until_disclosed": AskUntilDisclosedAgent,
    "transcript_only": TranscriptOnlyAgent,
}
DEV = tuple(s.scenario_id for s in scenarios_for("dev"))


def play(tmp_path_factory, cells, **env_kwargs):
    config = run_config(cells=cells, item_ids=DEV, turn_cost=0.05, **env_kwargs)
    return evaluate(tmp_path_factory.mktemp("run"), config, AGENTS, progress=False)


@pytest.fixture(scope="module")
def prosody(tmp_path_factory):
    cells = [
        cell(a, acc, "prosody")
        for a, acc in (
            ("state_aware", "T+S"),
            ("ask_unless_resolved", "T+S"),
            ("ask_before_confirm", "T"),
            ("ask_until_disclosed", "T"),
        )
    ]
    return play(tmp_path_factory, cells)


def metric(summary, name, key):
    return summary["cells"][f"{name}/prosody"]["metrics"][key]


def contrast(summary, name):
    return next(c for c in summary["contrasts"] if c["name"].startswith(name))["metrics"]


def test_the_transcript_alone_does_not_reach_the_concern_state(prosody):
    for agent in ("ask_before_confirm@T", "ask_until_disclosed@T"):
        assert metric(prosody, agent, "1st%")["point"] == 1.0  # asking finds the gold...
        gap = contrast(prosody, f"{agent} - state_aware@T+S (prosody)")["return"]
        assert gap["high"] < 0, (agent, gap)  # ...but spends turns that hearing the user saves
    disclosed = metric(prosody, "ask_until_disclosed@T", "return")
    assert disclosed["low"] > metric(prosody, "ask_before_confirm@T", "return")["point"]


def test_a_perfect_listener_pays_nothing_for_the_safety_net(prosody):
    for key in ("return", "1st%", "premature closure%"):
        gap = contrast(prosody, "ask_unless_resolved@T+S - state_aware@T+S (prosody)")[key]
        assert gap["low"] == gap["high"] == 0.0, key


@pytest.mark.parametrize(
    ("intervention", "twin"),
    [("all_unresolved", "ask_until_disclosed@T"), ("all_resolved", "transcript_only@T")],
)
def test_a_listener_that_hears_one_thing_plays_like_the_transcript_policy(
    tmp_path_factory, intervention, twin
):
    cells = [cell("ask_unless_resolved", "T+S", "prosody")]
    heard = play(tmp_path_factory, cells, state_intervention=intervention)
    plain = play(tmp_path_factory, [cell(*twin.split("@"), "prosody")])
    for key in ("return", "1st%", "dialogue length"):
        assert metric(heard, "ask_unless_resolved@T+S", key) == metric(plain, twin, key), key
