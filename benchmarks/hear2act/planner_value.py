"""What hearing the user is worth against the strongest transcript policy: ``planner`` (exact
Bayesian planning over the users the construction allows, ``agents.hear2act.planner``).

For every turn cost of ``TURN_COSTS`` (reward ``success``), on all 480 scenarios, one rollout
each, under prosody-mediated feedback: ``planner@T``, ``planner@T+S`` (the same planner hearing
the ground-truth tag, read as its graded state), ``ask_until_disclosed@T`` (the best rule-based
transcript policy) and ``state_aware@T+S`` (the paper's listener). Explicit feedback, where the words say everything
the tag does, is the control at ``CONTROL_TURN_COST``: there hearing must be worth (almost)
nothing. The runner tells each planner its run's turn cost and feedback (``configure``; the env's
options are not in the observation). Paired contrasts (same scenarios, same episode seeds) with
scenario-bootstrap CIs:

* ``planner@T - ask_until_disclosed@T`` and ``planner@T - state_aware@T+S``: what a better
  transcript policy recovers;
* ``planner@T+S - planner@T``: what listening is worth against the right reference.

Writes run folders under benchmarks/out/planner_value/ and the figures to
benchmarks/out/planner_value.json; a rerun resumes finished runs. About 18 minutes on a busy
2-core machine.

    python -m benchmarks.hear2act.planner_value
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.hear2act.baselines import AskUntilDisclosedAgent, StateAwareAgent
from agents.hear2act.planner import PlannerAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import Estimate, contrast_ci

OUT = Path(__file__).resolve().parents[1] / "out" / "planner_value"
TURN_COSTS = (0.05, 0.10, 0.15)
CONTROL_TURN_COST = 0.10
CELLS = (("planner", "T"), ("planner", "T+S"), ("ask_until_disclosed", "T"), ("state_aware", "T+S"))
CONTRASTS = (
    ("planner@T", "ask_until_disclosed@T"),
    ("planner@T", "state_aware@T+S"),
    ("planner@T+S", "planner@T"),
)
METRICS = ("return", "1st%", "dialogue length")
QUICK_TURNS = 6  # the opening and five decisions


def conditions() -> list[tuple[str, float]]:
    return [("prosody", cost) for cost in TURN_COSTS] + [("explicit", CONTROL_TURN_COST)]


def play(feedback: str, turn_cost: float, item_ids: tuple[str, ...]) -> dict[str, list[dict]]:
    """Cell (without the feedback) -> its episode records, from a finished or resumed run."""
    agents = {
        "planner": PlannerAgent,
        "ask_until_disclosed": AskUntilDisclosedAgent,
        "state_aware": StateAwareAgent,
    }
    config = run_config(
        [cell(a, access, feedback) for a, access in CELLS],
        item_ids,
        turn_cost=turn_cost,
        reward="success",
    )
    folder = OUT / f"{feedback}_cost{turn_cost}"
    evaluate(folder, config, agents, progress=True)
    by_cell: dict[str, list[dict]] = {}
    for record in read_results(folder / "results.jsonl"):
        by_cell.setdefault(record["cell"].removesuffix(f"/{feedback}"), []).append(record)
    return by_cell


def main() -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    console = Console(width=160)
    start = time.perf_counter()
    item_ids = tuple(s.scenario_id for s in scenarios_for("all"))
    report: dict = {}
    for feedback, turn_cost in conditions():
        by_cell = play(feedback, turn_cost, item_ids)
        sums = {
            name: {m: scenario_sums(episodes, item_ids, METRICS_BY_NAME[m]) for m in METRICS}
            for name, episodes in by_cell.items()
        }
        rows = report[f"{feedback} {turn_cost}"] = {"cells": {}, "contrasts": {}}
        table = Table("cell", *METRICS, "gold within 5 decisions", title=f"{feedback}, turn cost {turn_cost}")
        for name, episodes in by_cell.items():
            estimates = {m: contrast_ci([(1.0, sums[name][m])]) for m in METRICS}
            quick = sum(e["success"] and e["counts"]["turns"] <= QUICK_TURNS for e in episodes) / len(
                episodes
            )
            rows["cells"][name] = {**{m: e.as_dict() for m, e in estimates.items()}, "gold within 5": quick}
            table.add_row(name, *(_show(m, e) for m, e in estimates.items()), f"{100 * quick:.0f}%")
        console.print(table)
        contrasts = Table("return difference", "point [95% CI]", title=f"{feedback}, turn cost {turn_cost}")
        for a, b in CONTRASTS:
            gap = contrast_ci([(1.0, sums[a]["return"]), (-1.0, sums[b]["return"])])
            rows["contrasts"][f"{a} - {b}"] = gap.as_dict()
            contrasts.add_row(f"{a} - {b}", _show("difference", gap))
        console.print(contrasts)
    report["seconds"] = time.perf_counter() - start
    (OUT.parent / "planner_value.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _show(key: str, estimate: Estimate) -> str:
    if key == "1st%":
        return estimate.percent()
    sign = "+" if key == "difference" else ""
    return f"{estimate.point:{sign}.3f} [{estimate.low:{sign}.3f}, {estimate.high:{sign}.3f}]"


if __name__ == "__main__":
    main()
