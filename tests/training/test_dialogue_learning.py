"""Dialogue GRPO must learn (the ``learning`` tier, ``pytest -m learning``).

A small model built from scratch offline (``training.tiny_model.LEARNING_TOOL_LM``) is fine-tuned
on a few of the state-aware agent's Hear2Act dialogues under T+S, written as tool-calling chats
(``train_tool_sft``), then trained with dialogue GRPO through TRL's ``environment_factory``
(``train_dialogue_grpo``, task ``hear2act_dialogue_state``) on the env's return, with the settings
of ``agents.hear2act.dialogue_learning_recipe`` (``benchmarks/hear2act/dialogue_post_training.py`` is
the study over seeds and budgets).

The held-out evaluation plays the first 24 test scenarios 4 times each at the training
temperature (the policy GRPO trains), the SFT model and the GRPO model on the same seeded draws:
with the same weights the lift is exactly 0, so a trainer that stops learning fails here.
The lift on this seed and on a second model draw, at 32 and 16 GRPO steps, is on
``benchmarks/hear2act/dialogue_post_training.md`` (about 11 minutes on one thread). What GRPO
teaches at this budget is mostly to keep calling tools (fewer dialogues played out), not to
recommend better; played greedily the SFT model already never stops calling, so the evaluation
samples.
"""

from __future__ import annotations

import pytest

from agents.hear2act.dialogue_learning_recipe import HEAR2ACT_DIALOGUE_GRPO, HEAR2ACT_TOOL_SFT
from training.llm.dialogue_grpo import train_dialogue_grpo
from training.llm.heldout import evaluation_records, paired_lift, train_curve
from training.llm.tool_sft import train_tool_sft
from training.tiny_model import LEARNING_TOOL_LM, build_tiny_causal_lm

pytestmark = [pytest.mark.learning, pytest.mark.usefixtures("one_torch_thread")]
QUIET = {"wandb_project": None, "progress": False}


def test_dialogue_grpo_raises_held_out_return_under_t_plus_s_over_its_sft_start(tmp_path):
    """SFT teaches the tool grammar (its loss falls to a fraction of where it began); GRPO from
    that model raises the mean held-out return (the same test scenarios played before and
    after on the same draws, scenario-level paired bootstrap) with a CI above zero."""
    model = build_tiny_causal_lm(tmp_path / "model", **LEARNING_TOOL_LM, env_ids=("hear_gym/Hear2Act-v0",))
    sft = train_tool_sft(out=tmp_path / "sft", model=str(model), **HEAR2ACT_TOOL_SFT, **QUIET)
    loss = train_curve(tmp_path / "sft", "loss")
    assert sum(loss[-3:]) / 3 < 0.5 * sum(loss[:3]) / 3, loss

    run = tmp_path / "grpo"
    train_dialogue_grpo(out=run, model=sft["model"], **HEAR2ACT_DIALOGUE_GRPO, **QUIET)
    lift = paired_lift(evaluation_records(run, "base"), evaluation_records(run, "final"))
    assert lift.low > 0, lift
