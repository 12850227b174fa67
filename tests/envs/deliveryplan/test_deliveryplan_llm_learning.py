"""The learning tier (``pytest -m learning``): a tiny language model trained here learns the reply
grammar and reads the source record's labels into its plan.

A small model built from scratch offline (``training.tiny_model.LEARNING_LM``) is fine-tuned
with ``train_sft`` on the family's SFT demonstrations (the oracle's replies to the 134 training
sides of the public split; ``agents.deliveryplan.learning_recipe``), then the trainer's own
held-out evaluation plays it (the family's ``llm`` agent, strict JSON replies) on the 16 test
cases. At most a quarter of its replies may be malformed, and its plan-slot accuracy on the
originals must have a case-bootstrap CI above text-only's (the training majority plan, which a
model that ignores the evidence converges to; measured here too).

Measured on the test's seed: plan-slot 0.703 [0.531, 0.859] (text-only 0.438), 6.2% malformed;
from initial-weight seed 1: 0.656 [0.445, 0.859], 12.5% malformed. 40 epochs in batches of 16 left
28% malformed on the test's seed (the grammar at its edge; the recipe's docstring says why).
504 s on the shared 2-core machine at load average 9 (4.5 min of CPU time).

Not asserted: the change an edit licenses (counterfactual consistency 0.223 [0.062, 0.438] and
0.330 [0.125, 0.562] at the two seeds, prior-only 0, but 0.062 [0.000, 0.188] with an earlier
vocabulary) and citations (no cue id is copied: evidence F1 0).
"""

from __future__ import annotations

import pytest
import torch

from agents.deliveryplan.learning_recipe import DELIVERYPLAN_SFT
from agents.deliveryplan.play import mean_rows, play_control
from hear_gym.envs.deliveryplan.splits import split_ids
from training.llm.sft import train_sft
from training.tiny_model import LEARNING_LM, build_tiny_causal_lm

pytestmark = pytest.mark.learning


def test_sft_model_replies_in_the_grammar_and_beats_text_only_on_plan_slots(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model gains nothing from threads
    try:
        model = build_tiny_causal_lm(tmp_path / "model", **LEARNING_LM, env_ids=("hear_gym/DeliveryPlan-v0",))
        result = train_sft(
            out=tmp_path / "sft", model=str(model), wandb_project=None, progress=False, **DELIVERYPLAN_SFT
        )
    finally:
        torch.set_num_threads(threads)
    final = result["metrics"]["final"]
    plan_slot, malformed = final["plan_slot_accuracy_original"], final["malformed_rate"]
    text_only = mean_rows(
        play_control("text_only", split_ids("test", "public")), ["plan_slot_accuracy_original"]
    )
    assert plan_slot["n_scenarios"] == 16
    assert malformed["point"] <= 0.25, malformed
    assert plan_slot["low"] > text_only["plan_slot_accuracy_original"], (plan_slot, text_only)
