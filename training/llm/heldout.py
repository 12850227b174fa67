"""What a trainer's held-out evaluations say about learning, read from their episode records
(``evals/<name>/results.jsonl`` of a run folder, written by ``training.llm.common``).

* ``valid_reply_rate``: the share of VoiceGate replies that the env's parser (``parse_reply``)
  reads as a well-formed action. From the runner's records alone that is lenient: any text
  without a tag is an answer, so a random model's 128 tokens of noise count as valid.
  ``greedy_replies`` is strict: it plays a saved model greedily on held-out items and says
  whether each reply ended (its end-of-turn token before the cap), as GRPO's reward requires;
  ``ended_valid_rate`` counts a reply valid only if it ended and parses.
* ``mean_value``: the mean per-episode reward, with a bootstrap CI over item groups (a VoiceGate
  speaker-switch command and its twins stay together).
* ``paired_lift``: the mean per-episode reward of one evaluation minus another's on the same
  episodes, the same resampled groups for both (as every paired contrast in hear_gym).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hear_gym.envs.voicegate.actions import DecisionKind, parse_reply
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, ratio_ci
from training.llm.run_folder import read_curve

RESULTS_FILE = "results.jsonl"


def evaluation_records(run: Path, name: str) -> list[dict[str, Any]]:
    """The episode records of the evaluation ``name`` (``base``, ``final``, ``step_N``) of a run."""
    path = Path(run) / "evals" / name / RESULTS_FILE
    records = read_results(path)
    if not records:
        raise ValueError(f"{path}: no episode records (was the evaluation {name!r} run?)")
    return records


def valid_reply_rate(records: list[dict[str, Any]]) -> float:
    """Share of VoiceGate replies that parse as a well-formed action (mute, tool call or answer)."""
    return float(np.mean([parse_reply(r["reply"]).kind is not DecisionKind.MALFORMED for r in records]))


def mean_value(records: list[dict[str, Any]], value: str = "reward", seed: int = 0) -> Estimate:
    """Mean per-episode ``value``, bootstrap CI over item groups."""
    return ratio_ci(_group_sums(records, _groups(records), value), seed=seed)


def greedy_replies(
    model: str | Path, split: str = "test", max_new_tokens: int = 96, batch_size: int = 64
) -> list[tuple[str, bool]]:
    """(reply, ended) of a saved model or adapter (greedy) on every VoiceGate item of ``split``, with the
    prompt the text agent sends (``gate_rows``, as GRPO builds its rows)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.llm.clients import load_pretrained, processing_source
    from training.llm.grpo import gate_rows

    tokenizer = AutoTokenizer.from_pretrained(processing_source(str(model)), padding_side="left")
    policy = load_pretrained(AutoModelForCausalLM, str(model)).eval()  # an adapter: merged
    prompts = [
        tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        for row in gate_rows(split=split)
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


def paired_lift(
    before: list[dict[str, Any]], after: list[dict[str, Any]], value: str = "reward", seed: int = 0
) -> Estimate:
    """Mean ``value`` after minus before on the same episodes, bootstrap CI over item groups."""
    if sorted(r["episode_id"] for r in before) != sorted(r["episode_id"] for r in after):
        raise ValueError("a paired lift needs both evaluations to play the same episodes")
    groups = _groups(before)
    terms = [(1.0, _group_sums(after, groups, value)), (-1.0, _group_sums(before, groups, value))]
    return contrast_ci(terms, seed=seed)


def _group(record: dict[str, Any]) -> str:
    return record.get("group") or record["episode_id"]


def _groups(records: list[dict[str, Any]]) -> dict[str, int]:
    return {g: i for i, g in enumerate(sorted({_group(r) for r in records}))}


def _group_sums(records: list[dict[str, Any]], groups: dict[str, int], value: str) -> RatioSums:
    numerator, denominator = np.zeros(len(groups)), np.zeros(len(groups))
    for record in records:
        numerator[groups[_group(record)]] += float(record[value])
        denominator[groups[_group(record)]] += 1
    return RatioSums(numerator, denominator)


def train_curve(run: Path, key: str) -> list[float]:
    """``key`` of every training row of the run's curve that logged it (``loss``, ``reward``)."""
    return [float(r[key]) for r in read_curve(Path(run)) if r.get("kind") == "train" and key in r]
