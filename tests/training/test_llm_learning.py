"""Post-training must learn (the ``learning`` tier, ``pytest -m learning``).

A small model built from scratch offline (``training.tiny_model.LEARNING_LM``) is fine-tuned on
VoiceGate demonstrations with ``train_sft`` and then trained with ``train_grpo`` on the env's
reward, with the settings of ``agents.voicegate.learning_recipe`` (``benchmarks/llm_post_training.py``
records the curves in RESULTS.md). Each test fails when its trainer stops learning: at a
learning rate near zero no SFT reply ends and the loss stays flat, and GRPO leaves the held-out
reward where it was (its paired CI is then [0, 0]). Timings, one torch thread: SFT 3.5 min
of wall time (80 s of CPU) before its greedy check, GRPO 1.5 min (about 30 s of CPU, evaluations
included), measured 2026-12-02 on the 2-core machine at a load average of about 7; at a
load average of 22-30 the tier took 16 min for SFT and 2 min for GRPO; at 9-10 (19:05 UTC)
the file took 8.5 min (SFT 6.0 min, its greedy check 10 s, GRPO 95 s).
"""

from __future__ import annotations

import pytest

from agents.voicegate.learning_recipe import VOICEGATE_GRPO, VOICEGATE_SFT
from agents.voicegate.reply_checks import ended_valid_rate, greedy_replies, valid_reply_rate
from hear_gym.core.registry import family
from training.llm.grpo import train_grpo
from training.llm.heldout import evaluation_records, paired_lift, train_curve
from training.llm.sft import train_sft
from training.tiny_model import LEARNING_LM, build_tiny_causal_lm

pytestmark = [pytest.mark.learning, pytest.mark.usefixtures("one_torch_thread")]
QUIET = {"wandb_project": None, "progress": False}


@pytest.fixture(scope="module")
def sft_run(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("learning")
    model = build_tiny_causal_lm(root / "model", **LEARNING_LM)
    result = train_sft(out=root / "sft", model=str(model), **VOICEGATE_SFT, **QUIET)
    return root / "sft", result


def test_sft_teaches_a_model_from_scratch_the_reply_grammar(sft_run):
    """>= 95% of greedy replies on every held-out VoiceGate item end (their end-of-turn token
    before the cap) and parse as a well-formed action (``parse_reply``), and the SFT loss falls
    to a small fraction of where it began. (Parsing alone is not enough: any untagged text is an
    answer, and a model trained at learning rate ~0 passes it with 128 tokens of noise.)"""
    run, sft = sft_run
    replies = greedy_replies(sft["model"])
    assert len(replies) == len(family("hear_gym/VoiceGate-v0").episode_ids("test"))
    assert ended_valid_rate(replies) >= 0.95
    loss = train_curve(run, "loss")
    first, last = sum(loss[:5]) / 5, sum(loss[-5:]) / 5
    assert last < 0.2 * first, (first, last)


@pytest.mark.xfail(
    strict=True,
    reason="not learning on VoiceGate gen-3 items under the paper reward (2026-12-02): lift "
    "+0.008 [-0.153, +0.160] on held-out side-talk; no variant tried reached a CI above zero "
    "(64 completions a step, K=8, strict_format in training, side-talk + self-talk at lr 1e-4 "
    "to 3e-4, with and without KL, two seeds; the commands' text-only inputs as anchor rows, "
    "TRL's top-20%-entropy token mask, lr 1e-4 to 1e-3; 2026-12-03: from an SFT model without the "
    "switched twins, +0.253 held out, up to 160 steps of 64 completions at K=8, and a model "
    "twice as wide; GRPO on train items the SFT model was not shown, opener-swapped vocative "
    "side-talk twins as paired groups, LoRA on q/k only; from SFT on 200 demonstrations or on "
    "replies shuffled across prompts, it does not learn even which tool a command names; 400 "
    "steps of 64 from the no-twin SFT raise held-out side-talk at two seeds, not all items). "
    "At the recipe's budget GRPO does not improve even the "
    "kinds of input it trains on: right tool calls on held-out text-only commands fall (76 -> "
    "59-73 of 80), self-talk stays a tool call below lr 1e-3 and at 1e-3 everything mutes "
    "(benchmarks/RESULTS.md, post-training). Strict: a pass turns red.",
)
def test_grpo_from_the_sft_model_raises_held_out_reward(sft_run, tmp_path):
    """GRPO from the SFT model: the held-out reward of the trained model minus the SFT model's,
    on the same items (paired, item-group bootstrap), has a CI above zero."""
    _, sft = sft_run
    # final/ of a full-weight SFT run is a whole checkpoint: GRPO loads it as it is
    train_grpo(out=tmp_path / "grpo", model=sft["model"], **VOICEGATE_GRPO, **QUIET)
    before = evaluation_records(tmp_path / "grpo", "base")
    after = evaluation_records(tmp_path / "grpo", "final")
    lift = paired_lift(before, after)
    assert lift.low > 0, lift
    assert valid_reply_rate(after) >= 0.95  # the reward rose without breaking the grammar
