"""Dialogue GRPO's held-out evaluations (training.llm.dialogue_tools): the base and final models
sample from the same seeded stream, and an evaluation leaves the training run's random state as
it found it."""

from __future__ import annotations

import torch

from training.llm.dialogue_tools import seeded_sampler

CPU = torch.device("cpu")


def test_every_evaluation_samples_the_same_draws():
    torch.manual_seed(1)
    with seeded_sampler(7, CPU):
        base = torch.multinomial(torch.ones(50), 20, replacement=True)
    torch.rand(100)  # training samples in between
    with seeded_sampler(7, CPU):
        final = torch.multinomial(torch.ones(50), 20, replacement=True)
    assert torch.equal(base, final)
    with seeded_sampler(8, CPU):
        other_seed = torch.multinomial(torch.ones(50), 20, replacement=True)
    assert not torch.equal(base, other_seed)


def test_an_evaluation_leaves_the_run_random_state_as_it_was():
    torch.manual_seed(1)
    expected = torch.rand(5)
    torch.manual_seed(1)
    with seeded_sampler(7, CPU):
        torch.rand(1000)
    assert torch.equal(torch.rand(5), expected)
