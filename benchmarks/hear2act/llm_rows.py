"""LLM rows of the Hear2Act grid, run end to end with the tiny offline models (no weights can be
downloaded here): a tiny Qwen2 under T and T+S (the P6a card, plus P6b for T+S) and a tiny
Qwen2-Audio-shaped model under A+T, the first 32 held-out scenarios, both feedback realizations,
at most 6 turns, batched lockstep play (16 episodes per model call). The weights are random, so this measures the
pipeline (prompting, batching, parsing, invalid-action handling, reporting) and its speed, not
a model. Point ``--llm-client`` at real weights to fill these rows for a real model.

Writes benchmarks/out/llm_rows/ and benchmarks/out/llm_rows.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from agents.hear2act.llm import AudioLLMAgent, LLMAgent
from agents.llm.clients import TransformersAudioChatClient, TransformersChatClient
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.report import print_summary, to_markdown
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from training.tiny_model import build_tiny_audio_lm, build_tiny_causal_lm

OUT = Path(__file__).resolve().parents[1] / "out" / "llm_rows"
MAX_NEW_TOKENS = 16
BATCH = 16
SCENARIOS = 32
MAX_TURNS = 6


def main() -> None:
    models = OUT / "models"
    text_model = build_tiny_causal_lm(models / "tiny_qwen2")
    audio_model = build_tiny_audio_lm(models / "tiny_qwen2_audio")
    text = TransformersChatClient(str(text_model), max_new_tokens=MAX_NEW_TOKENS)
    audio = TransformersAudioChatClient(str(audio_model), max_new_tokens=MAX_NEW_TOKENS)
    agents = {"tiny_llm": lambda: LLMAgent(text), "tiny_audio_llm": lambda: AudioLLMAgent(audio)}
    cells = [
        cell(agent, access, feedback)
        for feedback in ("prosody", "explicit")
        for agent, access in (("tiny_llm", "T"), ("tiny_llm", "T+S"), ("tiny_audio_llm", "A+T"))
    ]
    config = run_config(
        cells, [s.scenario_id for s in scenarios_for("test")[:SCENARIOS]], max_turns=MAX_TURNS
    )
    start = time.perf_counter()
    summary = evaluate(OUT / "run", config, agents, progress=True, batch_size=BATCH)
    elapsed = time.perf_counter() - start
    records = read_results(OUT / "run" / "results.jsonl")
    turns = [t for r in records for t in r["turns"][3:]]  # after the standardized opening
    invalid = sum(t.get("invalid_action") is not None for t in turns) / max(len(turns), 1)
    console = Console(width=200)
    print_summary(summary, console)
    note = (
        f"{len(records)} episodes in {elapsed:.0f} s (batch {BATCH}, {MAX_NEW_TOKENS} new tokens); "
        f"invalid replies: {100 * invalid:.1f}% of {len(turns)} agent turns\n"
    )
    console.print(note)
    (OUT.parent / "llm_rows.md").write_text(note + "\n" + to_markdown(summary), encoding="utf-8")


if __name__ == "__main__":
    main()
