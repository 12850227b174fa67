"""The TRL internals ``PairedGRPOTrainer`` (and the audio trainers on it) rely on, through TRL's real
generation and loss on the tiny model (the reason ``trl`` is pinned to one minor version): its
``_generate_and_score_completions`` / ``_calculate_rewards`` overrides put both sides of a pair
in one group and drop zero-variance groups through ``tool_mask``, and ``tool_mask`` (env and tool
tokens, a dropped group) keeps tokens out of the loss."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from training.llm.grpo import GRPOSettings, make_trainer
from training.llm.paired_grpo import paired_advantages
from training.llm.start_model import load_text_model
from training.tiny_model import build_tiny_causal_lm

K = 4  # completions per group: K/2 per side of a pair


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


def _row(item_id: str, minus: str, words: str, minus_words: str) -> dict:
    return {
        "prompt": [{"role": "user", "content": words}],
        "item_id": item_id,
        "item_family": "test",
        "prompt_minus": [{"role": "user", "content": minus_words}],
        "item_id_minus": minus,
    }


# A pair (x+ rewarded 1, x- rewarded 0) and an ordinary row every completion of which gets 0.5.
ROWS = [
    _row("pair/plus", "pair/minus", "Send the message to Ana.", "Mute: send the message to Ana."),
    _row("alone", "alone", "What time is it?", "What time is it?"),
]
REWARDS = {"pair/plus": 1.0, "pair/minus": 0.0, "alone": 0.5}


@pytest.fixture(scope="module")
def scored(tiny_lm, tmp_path_factory):
    """The project's paired trainer on the tiny model (full fine-tuning), one generation batch
    (each row K times, as TRL's sampler gives it) generated and scored by TRL, and the item ids
    the reward saw."""
    seen: list[list[str]] = []

    def side_reward(completions, item_id, **kwargs):
        seen.append(list(item_id))
        return [REWARDS[i] for i in item_id]

    out = tmp_path_factory.mktemp("run")
    settings = GRPOSettings(
        out=out,
        model=str(tiny_lm),
        paired=True,
        num_generations=K,
        batch_size=2 * K,
        max_completion_length=6,
        lora={"enabled": False},
        wandb_project=None,
        progress=False,
    )
    trainer = make_trainer(settings, ROWS, side_reward, load_text_model(str(tiny_lm)))
    trainer.model.train()
    # what Trainer.train sets before its first step, read by the loss's token normalizer
    trainer.current_gradient_accumulation_steps = trainer.args.gradient_accumulation_steps
    output = trainer._generate_and_score_completions([row for row in ROWS for _ in range(K)])
    return trainer, output, seen


def test_a_pair_lands_in_one_group_and_a_flat_group_leaves_the_loss(scored):
    trainer, output, seen = scored
    assert seen == [["pair/plus"] * (K // 2) + ["pair/minus"] * (K // 2) + ["alone"] * K]
    rewards = torch.tensor([REWARDS[i] for i in seen[0]])
    advantages, kept = paired_advantages(rewards, K)
    assert torch.allclose(output["advantages"].cpu(), advantages)
    assert kept.tolist() == [True] * K + [False] * K
    assert output["tool_mask"][K:].sum() == 0 and output["tool_mask"][:K].eq(1).all()
    # dapo's token count: the kept group's completion tokens only
    assert output["num_items_in_batch"].item() == output["completion_mask"][:K].sum().item()


def _gradients(trainer, inputs, perturbed: list[tuple[int, int]]):
    """TRL's loss and its gradient, the logits of the completion tokens at (row, index) in
    ``perturbed`` changed: noise on the final hidden state that predicts each of them."""
    model = trainer.model
    prompt_length = inputs["prompt_ids"].shape[1]
    noise = torch.Generator().manual_seed(0)

    def perturb(module, args, hidden):
        hidden = hidden.clone()
        for row, index in perturbed:
            position = prompt_length + index - 1  # this hidden state predicts completion token `index`
            hidden[row, position] += torch.randn(hidden.shape[-1], generator=noise).to(hidden)
        return hidden

    hook = model.model.norm.register_forward_hook(perturb)
    try:
        model.zero_grad()
        loss = trainer.compute_loss(model, inputs)
        loss.backward()
    finally:
        hook.remove()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return loss.detach(), grads


def test_tokens_outside_tool_mask_never_reach_the_loss(scored):
    """Env or tool tokens (``tool_mask`` 0, as TRL marks a rollout's ``env_mask``) inside a kept
    completion: changing their logits changes neither the loss nor its gradient; changing a
    model token's logits changes the gradient."""
    trainer, output, _ = scored
    row = 0  # an x+ completion of the kept group (advantage != 0)
    tokens = output["completion_mask"][row].nonzero().flatten().tolist()
    assert len(tokens) >= 3, "a completion too short to hold env tokens and model tokens"
    env_tokens, model_token = tokens[1:-1], tokens[-1]
    inputs = dict(output)
    inputs["tool_mask"] = output["tool_mask"].clone()
    inputs["tool_mask"][row, env_tokens] = 0

    loss, grads = _gradients(trainer, inputs, [])
    assert any(g.abs().sum() > 0 for g in grads.values())
    env_loss, env_grads = _gradients(trainer, inputs, [(row, i) for i in env_tokens])
    assert env_loss == loss
    assert all(torch.equal(env_grads[name], grads[name]) for name in grads)
    _, model_grads = _gradients(trainer, inputs, [(row, model_token)])
    assert any(not torch.allclose(model_grads[name], grads[name]) for name in grads)
