"""The learning tier (``pytest -m learning``): a tiny language model trained here beats prior-only
on counterfactual consistency on held-out keys.

A small model built from scratch offline (``training.tiny_model.LEARNING_LM``) is fine-tuned
with ``train_sft`` on the family's SFT demonstrations (the oracle's plans for both sides of the 60
training cases of the source-key-disjoint split; ``agents.deliveryplan.learning_recipe``), then
the trainer's own held-out evaluation plays it (the family's ``llm`` agent, strict JSON replies)
on the 24 held-out pairs, whose original keys are never an original in training. Its
counterfactual consistency must have a case-bootstrap CI above prior-only's, which is exactly 0
on these pairs (measured here too). A model that has not learned the grammar replies malformed
and scores 0. About 6 CPU minutes on an idle machine, 14 on the busy 2-core one.
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


def test_sft_model_beats_prior_only_on_counterfactual_consistency(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model gains nothing from threads
    try:
        model = build_tiny_causal_lm(tmp_path / "model", **LEARNING_LM)
        result = train_sft(
            out=tmp_path / "sft", model=str(model), wandb_project=None, progress=False, **DELIVERYPLAN_SFT
        )
    finally:
        torch.set_num_threads(threads)
    consistency = result["metrics"]["final"]["counterfactual_consistency"]
    prior = mean_rows(
        play_control("prior_only", split_ids("test", "public"), "public"),
        ["counterfactual_consistency"],
    )["counterfactual_consistency"]
    assert consistency["n_scenarios"] == 16
    assert consistency["low"] > prior, consistency
