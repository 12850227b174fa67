"""The verifier's formulas (VoxReason §4.3) and the corner cases of Appendix B."""

import pytest

from hear_gym.envs.deliveryplan.plan import DeliveryPlan
from hear_gym.envs.deliveryplan.verifier import (
    MALFORMED,
    PlannerOutput,
    evidence_scores,
    score_case,
    score_pair,
)

PLAN = DeliveryPlan("mid", "mid", "mid", "mid", "mid", "fall", "modal", frozenset({0}))
GOLD = {"utt-1", "rol-1", "sce-1", "sou-1"}


def test_precision_recall_f1_by_cue_identity():
    s = evidence_scores({"utt-1", "sou-1", "sou-9"}, GOLD, "sou-1")
    assert s["evidence_precision"] == pytest.approx(2 / 3)
    assert s["evidence_recall"] == pytest.approx(1 / 2)
    assert s["evidence_f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert s["decisive_cue_recall"] == 1.0
    assert s["hallucinated_rate"] == pytest.approx(1 / 3)  # the illegal id lowers precision
    assert s["uncited_rate"] == pytest.approx(1 / 2)


def test_text_records_only_give_the_papers_text_only_evidence_row():
    s = evidence_scores({"utt-1", "rol-1", "sce-1"}, GOLD, "sou-1")
    assert s["evidence_f1"] == pytest.approx(0.857, abs=5e-4)
    assert (s["decisive_cue_recall"], s["hallucinated_rate"], s["uncited_rate"]) == (0.0, 0.0, 0.25)


def test_missing_evidence_has_zero_recall_and_no_hallucination():
    s = evidence_scores(set(), GOLD, "sou-1")
    assert s["evidence_precision"] == s["evidence_recall"] == s["evidence_f1"] == 0.0
    assert s["hallucinated_rate"] == 0.0  # no predicted evidence: its reference set is absent
    assert s["uncited_rate"] == 1.0


def test_absent_gold_set_gives_zero_recall_and_zero_uncited_rate():
    s = evidence_scores({"utt-1"}, set(), None)
    assert s["evidence_recall"] == 0.0 and s["uncited_rate"] == 0.0
    assert s["evidence_precision"] == 0.0 and s["hallucinated_rate"] == 1.0
    assert s["decisive_cue_recall"] == 0.0


def test_f1_is_zero_when_precision_plus_recall_is_zero():
    s = evidence_scores({"x-1"}, GOLD, "sou-1")
    assert s["evidence_precision"] == s["evidence_recall"] == 0.0
    assert s["evidence_f1"] == 0.0


def test_emphasis_needs_an_exact_set_and_counts_as_one_of_eight_slots():
    near = PLAN.replace(emphasis=frozenset({0, 2}))
    s = score_case(PlannerOutput(frozenset(GOLD), near), GOLD, "sou-1", PLAN)
    assert s["emphasis_exact"] == 0.0 and s["plan_slot_accuracy"] == pytest.approx(7 / 8)
    same = PlannerOutput(frozenset(GOLD), PLAN.replace(emphasis=[0]))  # normalized to a set
    assert score_case(same, GOLD, "sou-1", PLAN)["plan_slot_accuracy"] == 1.0


def test_gcite_gates_the_grounded_score_by_recall():
    out = PlannerOutput(frozenset({"utt-1", "rol-1", "sce-1"}), PLAN)
    s = score_case(out, GOLD, "sou-1", PLAN)
    assert s["gcite"] == pytest.approx(s["grounded_score"] * 0.75)
    uncited = score_case(PlannerOutput(frozenset(), PLAN), GOLD, "sou-1", PLAN)
    assert uncited["plan_slot_accuracy"] == 1.0 and uncited["gcite"] == 0.0


def test_grounded_weights_reproduce_the_papers_text_only_gcite():
    # text-only: F1 0.857, plan-slot 0.185, recall 0.75 -> Gcite 0.427 (VoxReason §6.1)
    from hear_gym.envs.deliveryplan.verifier import F1_WEIGHT, PLAN_WEIGHT

    assert (F1_WEIGHT * 6 / 7 + PLAN_WEIGHT * 0.185) * 0.75 == pytest.approx(0.427, abs=5e-4)


def test_malformed_output_scores_zero_with_full_uncited_rate():
    s = score_case(MALFORMED, GOLD, "sou-1", PLAN)
    assert s["plan_slot_accuracy"] == s["gcite"] == s["evidence_f1"] == 0.0
    assert s["uncited_rate"] == 1.0
    pair = score_pair(None, PLAN, {"energy": "high"})
    assert pair["required_change_accuracy"] == pair["preservation_rate"] == 0.0


LOUD = PLAN.replace(energy="high")


def test_pair_that_makes_exactly_the_licensed_change():
    pair = score_pair(PLAN, LOUD, {"energy": "high"})
    assert pair == {
        "required_change_accuracy": 1.0,
        "preservation_rate": 1.0,
        "unexpected_change_rate": 0.0,
        "counterfactual_consistency": 1.0,
    }


def test_repeating_the_plan_earns_preservation_but_no_required_change():
    pair = score_pair(PLAN, PLAN, {"energy": "high"})
    assert pair["required_change_accuracy"] == 0.0 and pair["preservation_rate"] == 1.0
    assert pair["counterfactual_consistency"] == 0.0


def test_a_required_field_earns_credit_only_when_it_changes_to_the_declared_value():
    assert score_pair(PLAN, PLAN.replace(energy="low"), {"energy": "high"})["required_change_accuracy"] == 0.0
    # already at the declared value in the planner's own original: no change, no credit
    assert score_pair(LOUD, LOUD, {"energy": "high"})["required_change_accuracy"] == 0.0


def test_unrelated_changes_cost_preservation():
    pair = score_pair(PLAN, LOUD.replace(rate="high", emphasis=frozenset()), {"energy": "high"})
    assert pair["required_change_accuracy"] == 1.0
    assert pair["unexpected_change_rate"] == pytest.approx(2 / 7)
    assert pair["counterfactual_consistency"] == pytest.approx(5 / 7)


def test_emphasis_delta_compares_as_a_set():
    pair = score_pair(PLAN, PLAN.replace(emphasis=frozenset()), {"emphasis": []})
    assert pair["required_change_accuracy"] == 1.0


def test_an_empty_declared_delta_has_zero_required_change_accuracy():
    assert score_pair(PLAN, PLAN, {})["required_change_accuracy"] == 0.0
