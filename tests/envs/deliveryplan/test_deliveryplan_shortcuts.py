"""Shortcut policies stay bounded (VoxReason §5.2, §6): what a planner can get without reading the
source record, or without responding to the edit. Every control plays through the env with
strict JSON replies (about 0.1 s per 100 cases)."""

import pytest

from agents.deliveryplan.play import mean_rows, play_control
from hear_gym.envs.deliveryplan.actions import CATALOGUE
from hear_gym.envs.deliveryplan.cases import generate_cases
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.splits import split_ids
from hear_gym.envs.deliveryplan.verifier import score_pair

ALL = split_ids("all")
METRICS = (
    "evidence_recall",
    "decisive_cue_recall",
    "gcite",
    "plan_slot_accuracy",
    "plan_slot_accuracy_original",
    "required_change_accuracy",
    "counterfactual_consistency",
    "unexpected_change_rate",
)


def _scores(control, split="all", partition="public", seed=0):
    return mean_rows(play_control(control, split_ids(split, partition), partition, seed), METRICS)


def test_text_only_misses_the_decisive_cue_and_every_required_change():
    s = _scores("text_only")
    assert s["decisive_cue_recall"] == 0.0  # it never sees the source record
    assert s["evidence_recall"] == pytest.approx(0.75)  # 3 of the 4 gold records
    # one plan for every key cannot be right on most of the 15 distinct key plans; with recall
    # capped at 3/4 and plan-slot below 0.6, Gcite <= 0.75 * (4/7 * 6/7 + 3/7 * 0.6) < 0.6
    assert s["plan_slot_accuracy"] < 0.6
    assert s["gcite"] < 0.6
    assert s["required_change_accuracy"] == s["counterfactual_consistency"] == 0.0


@pytest.mark.parametrize("partition", ["source_key_disjoint", "source_emotion_disjoint"])
def test_prior_only_never_makes_an_intensity_triggered_change(partition):
    s = _scores("prior_only", "test", partition)
    assert s["required_change_accuracy"] == s["counterfactual_consistency"] == 0.0
    assert s["gcite"] == 0.0  # no citations


def test_prior_only_plan_slot_is_high_on_held_out_keys_and_falls_on_held_out_emotions():
    keys = _scores("prior_only", "test", "source_key_disjoint")["plan_slot_accuracy_original"]
    emotions = _scores("prior_only", "test", "source_emotion_disjoint")["plan_slot_accuracy_original"]
    # a held-out key's trained sibling differs in exactly one of eight slots: at most 7/8
    assert 0.8 <= keys <= 7 / 8
    # an emotion training never saw gets the global majority plan
    assert emotions < 0.5 and emotions < keys - 0.3


def test_no_constant_plan_is_counterfactually_consistent():
    """Repeating any one plan (every catalogue plan) earns no required change on any case."""
    for plan in {PLAN_TABLE[key] for _, key in CATALOGUE}:
        for case in generate_cases():
            assert score_pair(plan, plan, case.declared_delta)["counterfactual_consistency"] == 0.0


def test_references_satisfy_locality_and_echo_does_not():
    for control in ("oracle", "declared_delta"):
        s = _scores(control, "test", "source_key_disjoint")
        assert s["counterfactual_consistency"] == s["decisive_cue_recall"] == 1.0
    echo = _scores("citation_echo", "test", "source_key_disjoint")
    assert echo["decisive_cue_recall"] == echo["required_change_accuracy"] == 0.0
    assert echo["unexpected_change_rate"] == 0.0


def test_shuffled_delta_depends_on_its_seed_and_falls_short_of_the_declared_delta():
    runs = [
        _scores("shuffled_delta", "test", "source_key_disjoint", seed)["counterfactual_consistency"]
        for seed in (0, 1, 2)
    ]
    assert max(runs) < 1.0 and len(set(runs)) > 1
