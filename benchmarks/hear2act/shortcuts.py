"""Hear2Act text-only shortcuts: how often each attack picks the gold from what reset shows.

Every scorer of ``agents.hear2act.shortcuts`` on all 480 scenarios and on the 192 held-out (dev + test)
ones, the gradient-boosted option classifier trained on the 288 train scenarios and scored on the
held-out ones, and a bag-of-words classifier on the user's replies to clarify (both feedback
realizations). Accuracies are expected hits with ties broken at random; 95% CIs from 2,000
scenario bootstrap resamples. Chance is 1 in 5. Prints a Markdown table and writes it to
benchmarks/out/hear2act_shortcuts.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import hear_gym  # noqa: F401  (registers the env ids)
from agents.hear2act.shortcuts import (
    SCORERS,
    OptionListView,
    clarify_replies,
    classifier_scores,
    expected_hit,
    fit_option_classifier,
    lexical_accuracy,
)
from hear_gym.envs.hear2act.scenarios.bank import GENERATOR_VERSION, scenario_bank, split_of
from hear_gym.envs.hear2act.user.states import Feedback
from hear_gym.stats.bootstrap import RatioSums, ratio_ci

OUT = Path(__file__).resolve().parents[1] / "out"


def _ci(hits: list[float]) -> str:
    values = np.asarray(hits, dtype=float)
    return ratio_ci(RatioSums(values, np.ones_like(values))).percent()


def main() -> None:
    start = time.perf_counter()
    env = gym.make("hear_gym/Hear2Act-v0", split="all")
    views, golds, held_out = [], [], []
    for s in scenario_bank():
        obs, _ = env.reset(seed=0, options={"item_id": s.scenario_id})
        views.append(OptionListView.from_observation(obs))
        golds.append(s.gold_option)
        held_out.append(split_of(s.domain, s.seed_index) != "train")
    rows = [
        f"Generator `{GENERATOR_VERSION}`; chance = 20.0.",
        "",
        "| attack | all 480 scenarios | held-out 192 |",
        "|---|---|---|",
    ]
    for name, scorer in SCORERS.items():
        hits = [expected_hit(scorer(v), g) for v, g in zip(views, golds, strict=True)]
        rows.append(
            f"| {name} | {_ci(hits)} | {_ci([h for h, o in zip(hits, held_out, strict=True) if o])} |"
        )
    train = [i for i, o in enumerate(held_out) if not o]
    model = fit_option_classifier([views[i] for i in train], [golds[i] for i in train])
    hits = [expected_hit(classifier_scores(model, views[i]), golds[i]) for i, o in enumerate(held_out) if o]
    rows.append(f"| gradient-boosted trees on option features (trained on train) | | {_ci(hits)} |")
    rows += ["", "| clarify replies, text classifier | balanced accuracy |", "|---|---|"]
    for feedback in Feedback:
        rows.append(
            f"| {feedback.value} | {lexical_accuracy(*clarify_replies(scenario_bank(), feedback)):.3f} |"
        )
    rows.append(f"\n{time.perf_counter() - start:.1f} s")
    table = "\n".join(rows)
    print(table)
    OUT.mkdir(exist_ok=True)
    (OUT / "hear2act_shortcuts.md").write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
