"""Every family's declared GRPO task trains through ``train_grpo`` on the tiny model, plain and
paired, with no change to ``training/``: the families added after the trainer (DeliveryPlan,
Ambiguity) included. One optimizer step each, then the held-out evaluation on two episodes."""

from __future__ import annotations

import pytest

from training.tiny_model import build_tiny_causal_lm

TASKS = ["deliveryplan", "ambiguity"]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


@pytest.mark.slow
@pytest.mark.parametrize("paired", [False, True], ids=["plain", "paired"])
@pytest.mark.parametrize("task", TASKS)
def test_a_new_familys_grpo_task_trains_a_step_and_evaluates(tiny_lm, tmp_path, task, paired):
    from training.llm.grpo import train_grpo

    result = train_grpo(
        out=tmp_path / "grpo",
        model=str(tiny_lm),
        task=task,
        paired=paired,
        item_limit=2,
        num_generations=2,
        batch_size=2,
        max_steps=1,
        max_completion_length=8,
        learning_rate=1e-2,
        evaluation={"limit": 2, "batch_size": 2, "base": False},
        wandb_project=None,
        progress=False,
    )
    assert (tmp_path / "grpo" / "final" / "adapter_config.json").is_file()
    assert result["rows"] >= 2 and "final" in result["metrics"]
