"""Hear2Act counterfactual assent pairs: one transcript, two users (genuine vs reluctant
acceptance); the prompts differ only in the state channel; the continuation reward prefers
CONFIRM on x+ and eliciting on x-; and paired GRPO consumes rows and reward for one step."""

from __future__ import annotations

import numpy as np
import pytest
from reward_spies import record_reward_calls

from agents.hear2act.assent_pairs import (
    GENERAL_ASK,
    ITEM_FAMILY,
    AssentReward,
    assent_pairs,
    pair_rows,
)
from agents.hear2act.audio_probe import ConcernInferrer, ProbeConfig, build_data, fit
from agents.hear2act.prompts import P6B
from hear_gym.envs.hear2act.scenario_facts import options_text
from hear_gym.envs.hear2act.user.realizer import SHARED_ACCEPTANCE_POOL
from hear_gym.envs.hear2act.user.states import RESOLVED_DELIVERY_LABELS

EOS = 0
CONFIRM = "[ACTION: CONFIRM] Great, I'll book it."
CLARIFY = "[ACTION: CLARIFY] Does this option fully work for you?"


@pytest.fixture(scope="module")
def pairs():
    return assent_pairs("train", limit=4, seed=0)


def _state_lines(prompt) -> tuple[str, str]:
    """(the user message without its state channel, the channel)."""
    text = prompt[1]["content"]
    head, _, tail = text.partition("\n\nCONCERN STATE: ")
    return head, tail


def test_pairs_share_one_transcript_and_differ_in_the_channel(pairs):
    assert len(pairs) == 4
    for pair in pairs:
        plus, minus = pair.resolved, pair.unresolved
        assert plus.transcript == minus.transcript and plus.replies == minus.replies
        assert plus.transcript.rsplit("\nUser: ", 1)[1] in SHARED_ACCEPTANCE_POOL  # the shared words
        assert plus.resolved and not minus.resolved
        assert plus.delivery in RESOLVED_DELIVERY_LABELS and minus.delivery not in RESOLVED_DELIVERY_LABELS
        assert (plus.user is None) != (minus.user is None)  # one side is the scenario's user, one its twin
        # the paper's logic, in the hidden truth: x+ rests on the gold, x- on an L1-feasible non-gold
        assert plus.scenario().gold_option == plus.option
        assert minus.scenario().gold_option != minus.option
        assert minus.scenario().candidate(minus.option).satisfies[0]
        # the twin is the same visible world: options, request, L1
        twin, real = (plus, minus) if plus.user else (minus, plus)
        assert options_text(twin.scenario()) == options_text(real.scenario())
        assert twin.scenario().concerns[0] == real.scenario().concerns[0]

    rows = pair_rows(pairs, access="T+S")
    for pair, row in zip(pairs, rows, strict=True):
        assert row["item_family"] == ITEM_FAMILY
        assert (row["item_id"], row["item_id_minus"]) == (
            pair.item_id("resolved"),
            pair.item_id("unresolved"),
        )
        assert row["prompt"][0] == row["prompt_minus"][0]  # same P6a system prompt
        (words, tag), (words_minus, tag_minus) = (
            _state_lines(row["prompt"]),
            _state_lines(row["prompt_minus"]),
        )
        assert words == words_minus == pair.resolved.transcript
        assert tag == P6B.format(state=pair.resolved.delivery).removeprefix("CONCERN STATE: ")
        assert tag_minus == P6B.format(state=pair.unresolved.delivery).removeprefix("CONCERN STATE: ")
    # the transcript-only control: the two sides are the same prompt (the paper's trap)
    assert all(r["prompt"] == r["prompt_minus"] for r in pair_rows(pairs, access="T"))
    plain = pair_rows(pairs[:1], access="T+S", paired=False)
    assert (
        [r["item_id"] for r in plain]
        == [r["item_id_minus"] for r in plain]
        == [
            pairs[0].item_id("resolved"),
            pairs[0].item_id("unresolved"),
        ]
    )


def test_same_seed_same_pairs(pairs):
    again = assent_pairs("train", limit=4, seed=0)
    assert again == pairs
    assert pair_rows(again, access="T+S") == pair_rows(pairs, access="T+S")
    assert assent_pairs("train", limit=4, seed=1) != pairs  # the seed draws the points


class _Recording:
    """A ``StateInferrer`` that remembers what it heard."""

    def __init__(self, inner) -> None:
        self.inner, self.heard = inner, []

    def infer(self, waveform, sample_rate, transcript, reference):
        self.heard.append((transcript, waveform, reference))
        return self.inner.infer(waveform, sample_rate, transcript, reference)


def test_audio_inferred_state_rows_hear_the_two_deliveries(pairs):
    from hear_gym.speech.cache import RenderCache
    from hear_gym.speech.renderers import make_renderer

    config = ProbeConfig(max_scenarios=1, epochs=40)  # a concern probe, trained on 22 rendered turns
    probe = fit(config, build_data(config, "train", RenderCache(make_renderer("espeak")), seed=0))
    inferrer = _Recording(ConcernInferrer(probe))
    pair = pairs[0]
    (row,) = pair_rows([pair], access="T+S^", state_inferrer=inferrer)
    for prompt in (row["prompt"], row["prompt_minus"]):
        text = prompt[1]["content"]
        assert text.startswith(f"DIALOGUE TRANSCRIPT:\n{pair.resolved.transcript}\n\nAUDIO-INFERRED STATE:\n")
        assert text.rsplit("\n", 1)[1] in ConcernInferrer.SENTENCES.values()
    at_assent = [h for h in inferrer.heard if h[0] == pair.resolved.transcript]
    assert len(at_assent) == 2  # x+ then x-: same words, same transcript, the deliveries differ
    (_, plus, ref_plus), (_, minus, ref_minus) = at_assent
    assert np.array_equal(ref_plus, ref_minus) and not np.array_equal(plus, minus)
    with pytest.raises(ValueError, match="needs state_inferrer"):
        pair_rows([pair], access="T+S^")


def _completions(replies):
    return [[{"role": "assistant", "content": r}] for r in replies]


def test_reward_confirms_on_x_plus_and_elicits_on_x_minus(pairs):
    success = AssentReward(pairs, {EOS}, reward="success", turn_cost=0.05)
    tiered = AssentReward(pairs, {EOS}, reward="tiered", turn_cost=0.02)
    for pair in pairs:
        plus, minus = pair.item_id("resolved"), pair.item_id("unresolved")
        n = len(pair.resolved.replies)  # turns after the opening up to the decision point
        for reward in (success, tiered):
            confirm_plus, ask_plus = reward.score(plus, CONFIRM)[0], reward.score(plus, GENERAL_ASK)[0]
            confirm_minus = reward.score(minus, CONFIRM)[0]
            assert confirm_plus > ask_plus
            assert reward.score(minus, GENERAL_ASK)[0] > confirm_minus
            assert reward.score(minus, CLARIFY)[0] > confirm_minus
        # by hand: CONFIRM ends on the current option after n + 1 paid turns
        assert success.score(plus, CONFIRM)[0] == pytest.approx(1 - 0.05 * (n + 1))
        assert success.score(minus, CONFIRM)[0] == pytest.approx(0 - 0.05 * (n + 1))
        # ASK on x+: "I'm happy with this one" in a resolved voice, then the continuation confirms
        assert success.score(plus, GENERAL_ASK)[0] == pytest.approx(1 - 0.05 * (n + 2))
        l1, l2, l3 = pair.unresolved.scenario().candidate(pair.unresolved.option).satisfies
        assert l1 and not (l2 and l3)
        by_hand = 0.5 + 0.3 * l2 + 0.2 * l3 - 0.02 * (n + 1)
        assert tiered.score(minus, CONFIRM)[0] == pytest.approx(by_hand)


def test_cut_and_malformed_replies_are_invalid(pairs):
    reward = AssentReward(pairs, {EOS}, reward="success", turn_cost=0.05)
    pair = pairs[0]
    plus, minus = pair.item_id("resolved"), pair.item_id("unresolved")
    n = len(pair.resolved.replies)
    metrics = {}
    rewards = reward(
        completions=_completions([CONFIRM, CONFIRM, "hello there", CONFIRM]),
        completion_ids=[[5, EOS], [5, 6], [5, EOS], [5, EOS]],  # the second was cut by the cap
        item_id=[plus, plus, minus, minus],
        item_family=[ITEM_FAMILY] * 4,
        log_metric=metrics.__setitem__,
    )
    # cut: stepped as the empty reply (invalid, -0.1 and a turn), then the continuation confirms
    assert rewards[1] == pytest.approx(1 - 0.05 * (n + 2) - 0.1) == reward.score(plus, "")[0]
    assert reward.score(plus, "")[1] is False and reward.score(minus, "hello there")[1] is False
    assert rewards[0] == pytest.approx(1 - 0.05 * (n + 1)) and rewards[3] == pytest.approx(-0.05 * (n + 1))
    assert rewards[2] == reward.score(minus, "")[0]  # malformed is scored like empty
    assert metrics == {
        "valid_format": 0.5,
        "reward/hear2act_assent": pytest.approx(sum(rewards) / 4),
        "reward/resolved": pytest.approx(sum(rewards[:2]) / 2),
        "reward/unresolved": pytest.approx(sum(rewards[2:]) / 2),
    }


def test_refusals(pairs):
    with pytest.raises(ValueError, match="prosody-mediated"):
        assent_pairs("train", limit=1, feedback="explicit")
    with pytest.raises(ValueError, match="cannot be replayed"):
        AssentReward(pairs, {EOS}, feedback="explicit")


def test_paired_grpo_trains_one_step_on_assent_pairs(pairs, tmp_path, monkeypatch):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from training.llm.grpo import end_of_turn_ids
    from training.llm.paired_grpo import PairedGRPOTrainer
    from training.tiny_model import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "m")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    reward = AssentReward(pairs[:2], end_of_turn_ids(model, tokenizer), reward="success", turn_cost=0.05)
    seen = record_reward_calls(monkeypatch, AssentReward)
    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        num_generations=2,
        per_device_train_batch_size=4,
        max_completion_length=16,
        max_steps=1,
        learning_rate=1e-3,
        beta=0.0,
        loss_type="dapo",
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,  # on CPU it only costs time
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        seed=0,
        disable_tqdm=True,
    )
    trainer = PairedGRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[reward],
        args=config,
        train_dataset=Dataset.from_list(pair_rows(pairs[:2], access="T+S")),
    )
    trainer.train()
    assert trainer.state.global_step == 1
    for group in (seen[0][:2], seen[0][2:]):  # both sides of one pair in each group of K = 2
        pair_id = group[0].rsplit("/", 1)[0]
        assert group == [f"{pair_id}/resolved", f"{pair_id}/unresolved"]
    logged = {k for row in trainer.state.log_history for k in row}
    assert {"reward/resolved", "reward/unresolved", "valid_format", "paired/dropped_group_fraction"} <= logged
