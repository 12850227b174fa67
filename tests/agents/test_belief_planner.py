"""The belief planner folds an ear's likelihoods into its belief over the users: on a perfect
channel it must play ``planner@T+S``, on an uninformative one ``planner@T``, the same seed must
replay the same dialogue, and its ear's errors must come from the episode's seed."""

from functools import partial

import numpy as np
import pytest

from agents.hear2act.belief_planner import BeliefPlannerAgent
from agents.hear2act.ears import DeafEar, SimulatedEar, TagEar
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.simulated_ear import ScoreEar, VerdictEar
from agents.hear2act.simulated_listener import SimulatedProbePlannerAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import contrast_ci

DEV = tuple(s.scenario_id for s in scenarios_for("dev"))


def dialogues(tmp_path, name: str, access: str, factory, item_ids=DEV[:8], rollouts: int = 2) -> dict:
    """(episode, rollout) -> (actions, return) of one cell at turn cost 0.1."""
    folder = tmp_path / f"{name}_{access}"
    config = run_config([cell(name, access, "prosody")], item_ids, rollouts=rollouts, turn_cost=0.1)
    evaluate(folder, config, {name: factory}, progress=False)
    return {
        (r["item_id"], r["rollout"]): ([t["action"] for t in r["turns"]], r["return"])
        for r in read_results(folder / "results.jsonl")
    }


def test_on_the_ground_truth_tag_it_plays_planner_at_t_s(tmp_path):
    expected = dialogues(tmp_path, "planner", "T+S", PlannerAgent)
    assert dialogues(tmp_path, "belief_planner", "T+S", partial(BeliefPlannerAgent, TagEar())) == expected


@pytest.mark.parametrize(
    "ear",
    [ScoreEar(0.5), VerdictEar(0.3, 0.3)],
    ids=["score of AUC 0.5", "verdict as likely either way"],
)
def test_on_an_uninformative_ear_it_plays_planner_at_t(tmp_path, ear):
    """The likelihoods go into the belief and the lookahead enumerates the ear's readings, yet
    when they cannot tell the users apart the dialogue is the transcript planner's."""
    expected = dialogues(tmp_path, "planner", "T", PlannerAgent)
    heard = dialogues(tmp_path, "belief_planner", "T+S", partial(BeliefPlannerAgent, SimulatedEar(ear)))
    assert heard == expected


def test_a_deaf_ear_plays_planner_at_t_under_any_access(tmp_path):
    expected = dialogues(tmp_path, "planner", "T", PlannerAgent)
    assert dialogues(tmp_path, "belief_planner", "T", partial(BeliefPlannerAgent, DeafEar())) == expected


def test_the_same_seed_replays_the_same_dialogue(tmp_path):
    factory = partial(BeliefPlannerAgent, SimulatedEar(ScoreEar(0.8)))
    first = dialogues(tmp_path / "a", "belief_planner", "T+S", factory, item_ids=DEV[:4])
    np.random.seed(12345)  # a global generator must change nothing
    assert dialogues(tmp_path / "b", "belief_planner", "T+S", factory, item_ids=DEV[:4]) == first


@pytest.mark.parametrize("probe", [ScoreEar(0.8), VerdictEar(0.5, 0.1)], ids=["score", "verdict"])
def test_a_simulated_ear_hears_the_same_on_the_same_episode_seed_and_anew_on_another(probe):
    tags = [{"concern_state": label} for label in ("satisfied", "lukewarm", "concerned", "warm", "flat") * 8]

    def heard(seed: int) -> list:
        ear = SimulatedEar(probe)
        ear.reset(seed)
        return [ear.hear(tag) for tag in tags]

    first = heard(3)
    np.random.seed(12345)  # a global generator must change nothing
    assert heard(3) == first
    assert heard(4) != first


def test_a_simulated_probe_hears_at_its_operating_point():
    from agents.hear2act.simulated_ear import ear_generator

    ear = VerdictEar(0.42, 0.01)
    rng = ear_generator(7)
    genuine = np.mean([ear.hear(True, rng) for _ in range(20_000)])
    reluctant = np.mean([ear.hear(False, rng) for _ in range(20_000)])
    assert abs(genuine - 0.42) < 0.015 and abs(reluctant - 0.01) < 0.003, (genuine, reluctant)
    score = ScoreEar(0.8)
    heard_r = np.array([score.hear(True, rng) for _ in range(4_000)])
    heard_u = np.array([score.hear(False, rng) for _ in range(4_000)])
    auc = (heard_r[:, None] > heard_u[None, :]).mean()
    assert abs(auc - 0.8) < 0.02, auc


@pytest.mark.parametrize(
    ("kwargs", "named"), [({"recall": 1.2}, "recall"), ({"false_resolved": -0.1}, "false")]
)
def test_bad_operating_points_are_named(kwargs, named):
    with pytest.raises(ValueError, match=named):
        VerdictEar(**{"recall": 0.5, "false_resolved": 0.01, **kwargs})


@pytest.mark.parametrize("auc", [0.4, 1.0, True])
def test_bad_areas_are_named(auc):
    with pytest.raises(ValueError, match="auc"):
        ScoreEar(auc)


def test_a_simulated_probe_as_likely_either_way_leaves_the_transcript_planner(tmp_path):
    expected = dialogues(tmp_path, "planner", "T", PlannerAgent)
    simulated = partial(SimulatedProbePlannerAgent, 0.3, 0.3)
    assert dialogues(tmp_path, "simulated_probe_planner", "T+S", simulated) == expected


def test_ears_that_read_the_tag_refuse_other_access():
    agent = BeliefPlannerAgent(SimulatedEar(ScoreEar(0.8)))
    with pytest.raises(KeyError, match="T\\+S"):
        agent.act({"transcript": "User: hi", "turn": 1, "current_option": 1})


@pytest.mark.slow
def test_a_good_ear_realizes_value_over_planner_at_t(tmp_path):
    """On the dev split at turn cost 0.1, a simulated ear of AUC 0.98 must realize some of
    listening's value over ``planner@T`` with a paired CI above zero."""
    returns = {}
    for name, access, factory in (
        ("planner", "T", PlannerAgent),
        ("belief_planner", "T+S", partial(BeliefPlannerAgent, SimulatedEar(ScoreEar(0.98)))),
    ):
        folder = tmp_path / name
        evaluate(
            folder, run_config([cell(name, access, "prosody")], DEV, turn_cost=0.1), {name: factory}, False
        )
        returns[name] = scenario_sums(read_results(folder / "results.jsonl"), DEV, METRICS_BY_NAME["return"])
    gap = contrast_ci([(1.0, returns["belief_planner"]), (-1.0, returns["planner"])])
    assert gap.low > 0, gap
