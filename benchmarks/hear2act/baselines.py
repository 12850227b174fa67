"""Hear2Act baseline grid: every baseline agent, both feedback realizations, all 480 scenarios,
two rollouts each (the paper's Table 5 uses n = 960 per cell). Writes the run folder to
benchmarks/out/hear2act_baselines/ and the tables as Markdown next to it; prints them and the
wall time. Rerunning resumes the folder (delete it to measure from scratch).
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from agents.hear2act.baselines import AskBeforeConfirmAgent, StateAwareAgent, TranscriptOnlyAgent
from agents.hear2act.shortcuts import OptionListShortcutAgent
from agents.random_agent import RandomAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.report import print_summary, to_markdown
from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
from hear_gym.eval.pipeline import evaluate

OUT = Path(__file__).resolve().parents[1] / "out"
AGENTS = {
    "transcript_only": TranscriptOnlyAgent,
    "state_aware": StateAwareAgent,
    "ask_before_confirm": AskBeforeConfirmAgent,
    "random": RandomAgent,
    "option_list_shortcut": OptionListShortcutAgent,
}
CELLS = (
    ("transcript_only", "T"),
    ("state_aware", "T+S"),
    ("ask_before_confirm", "T"),
    ("random", "T"),
    ("option_list_shortcut", "T"),
)


def main() -> None:
    config = run_config(
        cells=[cell(a, acc, fb) for fb in ("prosody", "explicit") for a, acc in CELLS],
        item_ids=[s.scenario_id for s in scenario_bank()],
        rollouts=2,
        seed=0,
    )
    start = time.perf_counter()
    summary = evaluate(OUT / "hear2act_baselines", config, AGENTS)
    elapsed = time.perf_counter() - start
    console = Console(width=170)
    print_summary(summary, console)
    console.print(f"{summary['n_episodes']} episodes in {elapsed:.1f} s")
    (OUT / "hear2act_baselines.md").write_text(to_markdown(summary), encoding="utf-8")


if __name__ == "__main__":
    main()
