"""Whether a VoiceGate chat model replies in the env's grammar (the learning tier's SFT check).

``valid_reply_rate`` reads the runner's records with the env's parser (``parse_reply``). That is
lenient: any text without a tag is an answer, so a random model's 128 tokens of noise count as
valid. ``greedy_replies`` is strict: it plays a saved model greedily on held-out items and says
whether each reply ended (its end-of-turn token before the cap), as GRPO's reward requires;
``ended_valid_rate`` counts a reply valid only if it ended and parses. ``sampled_records`` scores
the policy GRPO trains: replies sampled at its temperature, each with the env's reward, the draws
seeded so that two models are compared on the same ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.voicegate.grpo_items import EnvReward, gate_prompts
from hear_gym.core.registry import family
from hear_gym.envs.voicegate.actions import DecisionKind, parse_reply
from hear_gym.envs.voicegate.family import ENV_ID


def valid_reply_rate(records: list[dict[str, Any]]) -> float:
    """Share of VoiceGate replies that parse as a well-formed action (mute, tool call or answer)."""
    return float(np.mean([parse_reply(r["reply"]).kind is not DecisionKind.MALFORMED for r in records]))


def greedy_replies(
    model: str | Path, split: str = "test", max_new_tokens: int = 96, batch_size: int = 64
) -> list[tuple[str, bool]]:
    """(reply, ended) of a saved model or adapter (greedy) on every VoiceGate episode of ``split``
    (text-only inputs included), with the prompt the text agent sends (``gate_prompts``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.llm.clients import load_pretrained, processing_source

    tokenizer = AutoTokenizer.from_pretrained(processing_source(str(model)), padding_side="left")
    policy = load_pretrained(AutoModelForCausalLM, str(model)).eval()  # an adapter: merged
    prompts = [
        tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        for chat in gate_prompts(list(family(ENV_ID).item_ids(split))).values()
    ]
    replies = []
    for start in range(0, len(prompts), batch_size):
        inputs = tokenizer(prompts[start : start + batch_size], return_tensors="pt", padding=True)
        with torch.no_grad():
            output = policy.generate(
                **inputs, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )
        new = output[:, inputs["input_ids"].shape[1] :]
        ended = (new == tokenizer.eos_token_id).any(dim=1).tolist()
        replies += zip(tokenizer.batch_decode(new, skip_special_tokens=True), ended, strict=True)
    return replies


def ended_valid_rate(replies: list[tuple[str, bool]]) -> float:
    """Share of (reply, ended) that ended and parse as a well-formed action."""
    return float(
        np.mean([ended and parse_reply(r).kind is not DecisionKind.MALFORMED for r, ended in replies])
    )


def sampled_records(
    model: str | Path,
    item_ids: list[str],
    samples: int = 8,
    temperature: float = 0.7,
    max_completion_length: int = 48,
    seed: int = 0,
    batch_size: int = 64,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """One record (``item_id``, the generated ``text``, whether it ``ended``, ``reward``) per
    reply of a saved model or adapter, sampled ``samples`` times at ``temperature`` on each
    VoiceGate item and scored with the env's reward as GRPO scores it (a reply cut by
    ``max_completion_length`` is the empty reply). The draws come from torch's generators seeded
    with ``seed``, and the caller's random state is left as it was: the same weights give the
    same records (common random numbers), so ``paired_lift`` of two models' records compares
    them on the same draws."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.device import model_dtype, resolve_device
    from agents.llm.clients import load_pretrained, processing_source

    device = resolve_device(device)
    tokenizer = AutoTokenizer.from_pretrained(processing_source(str(model)), padding_side="left")
    policy = load_pretrained(AutoModelForCausalLM, str(model), model_dtype(device)).to(device).eval()
    reward = EnvReward(item_ids, {tokenizer.eos_token_id})
    chats = gate_prompts(list(item_ids))
    prompts = [
        tokenizer.apply_chat_template(chats[i], tokenize=False, add_generation_prompt=True) for i in item_ids
    ]
    records = []
    with torch.random.fork_rng(devices=[device] if device.startswith("cuda") else []):
        torch.manual_seed(seed)
        for start in range(0, len(prompts), batch_size):
            batch = prompts[start : start + batch_size]
            inputs = tokenizer(batch, return_tensors="pt", padding=True).to(device)
            with torch.no_grad():
                output = policy.generate(
                    **inputs,
                    max_new_tokens=max_completion_length,
                    do_sample=True,
                    temperature=temperature,
                    top_k=0,
                    num_return_sequences=samples,
                    pad_token_id=tokenizer.pad_token_id,
                )
            new = output[:, inputs["input_ids"].shape[1] :]
            ended = (new == tokenizer.eos_token_id).any(dim=1).tolist()
            texts = tokenizer.batch_decode(new, skip_special_tokens=True)
            for n, (text, done) in enumerate(zip(texts, ended, strict=True)):
                item_id = item_ids[start + n // samples]
                reply = text if done else ""
                records.append(
                    {
                        "item_id": item_id,
                        "text": text,
                        "ended": done,
                        "reward": reward.score(item_id, reply)[0],
                    }
                )
    return records
