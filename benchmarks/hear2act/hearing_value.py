"""What quality of hearing pays in Hear2Act: the planner fed a simulated probe of controlled
operating point, against ``planner@T``, per turn cost.

``simulated_probe_planner@T+S`` (``agents.hear2act.simulated_listener``) is the planner reading a
``VerdictEar`` (``agents.hear2act.simulated_ear``): for a genuine acceptance it hears "resolved"
with probability ``recall``, for any other turn with probability ``false_resolved``, errors
independent per turn and drawn from the episode's seed; the planner weighs the verdicts at those
exact rates. Its return minus ``planner@T``'s (paired: same scenarios, same episode seeds, so the
same user words until the dialogues part) is what hearing at that operating point realizes; the
ceiling is ``planner@T+S - planner@T`` (the graded ground-truth tag), and a perfect
resolved-reader (recall 1, false resolved 0) is the most a two-class ear can realize.

Held out: the 96 test scenarios x ``--rollouts``, prosody-mediated feedback, reward
``success``, turn costs ``TURN_COSTS``. Each (turn cost, ear) is its own run folder under
benchmarks/out/hearing_value/, so a rerun resumes and a grid can grow; figures go to
benchmarks/out/hearing_value.json and the PNG beside this script.

    python -m benchmarks.hear2act.hearing_value                # 3 rollouts a scenario
    python -m benchmarks.hear2act.hearing_value --rollouts 1    # the issue's size
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.hear2act.planner import PlannerAgent
from agents.hear2act.simulated_listener import SimulatedProbePlannerAgent
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import RatioSums, contrast_ci

HERE = Path(__file__).parent
OUT = HERE.parent / "out" / "hearing_value"
FIGURE = HERE / "hearing_value.png"
TURN_COSTS = (0.05, 0.10, 0.15)
RECALLS = (0.2, 0.42, 0.6, 1.0)
FALSE_RESOLVED = (0.01, 0.0)  # played in this order: today's probes' rate first
ROLLOUTS = 3
# Where today's real probes sit (the listening-value benchmark's assent probe at 1% false
# resolved on the dev split's shared assents): recall of genuine acceptances there.
TODAY = {"eSpeak probe": 0.42, "neural-voice probe": 0.392}
REFERENCES = (("planner", "T"), ("planner", "T+S"))
TRANSCRIPT_POLICY = "planner@T"


def ear_name(recall: float, false_resolved: float) -> str:
    return f"sim_r{recall}_f{false_resolved}"


def runs(ears: tuple[tuple[float, float], ...]) -> dict[str, tuple[list, dict]]:
    """Run name -> (cells, agent factories): the references, then one run per ear."""
    out = {
        "references": ([cell(a, access, "prosody") for a, access in REFERENCES], {"planner": PlannerAgent})
    }
    for recall, false_resolved in ears:
        name = ear_name(recall, false_resolved)
        out[name] = (
            [cell(name, "T+S", "prosody")],
            {name: partial(SimulatedProbePlannerAgent, recall, false_resolved)},
        )
    return out


def play(
    turn_cost: float, run: str, cells: list, agents: dict, item_ids: tuple[str, ...], rollouts: int
) -> Path:
    """One run folder, played or resumed."""
    config = run_config(cells, item_ids, rollouts=rollouts, turn_cost=turn_cost, reward="success")
    folder = OUT / f"cost{turn_cost}_r{rollouts}_{run}"
    evaluate(folder, config, agents, progress=True)
    return folder


def return_sums(episodes: dict[str, list[dict]], item_ids: tuple[str, ...], first_only: bool = False):
    """Cell label -> per-scenario return sums (``first_only``: rollout 0 alone, a one-rollout run)."""
    return {
        label: scenario_sums(
            [e for e in records if not first_only or e["rollout"] == 0],
            item_ids,
            METRICS_BY_NAME["return"],
        )
        for label, records in episodes.items()
    }


def main(rollouts: int = ROLLOUTS) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    console = Console(width=160)
    start = time.perf_counter()
    item_ids = tuple(s.scenario_id for s in scenarios_for("test"))
    ears = tuple((r, f) for f in FALSE_RESOLVED for r in RECALLS)
    report: dict = {"rollouts": rollouts, "scenarios": len(item_ids), "turn_costs": {}}
    folders: dict[float, list[Path]] = {cost: [] for cost in TURN_COSTS}
    for run, (cells, agents) in runs(ears).items():  # every cost of one ear before the next ear
        for turn_cost in TURN_COSTS:
            folders[turn_cost].append(play(turn_cost, run, cells, agents, item_ids, rollouts))
    for turn_cost in TURN_COSTS:
        episodes: dict[str, list[dict]] = {}
        for folder in folders[turn_cost]:
            for record in read_results(folder / "results.jsonl"):
                episodes.setdefault(record["cell"].removesuffix("/prosody"), []).append(record)
        sums, first = (
            return_sums(episodes, item_ids),
            return_sums(episodes, item_ids, first_only=True),
        )

        def over_reference(label: str, among: dict[str, RatioSums] = sums) -> dict:
            return contrast_ci([(1.0, among[label]), (-1.0, among[TRANSCRIPT_POLICY])]).as_dict()

        ceiling = over_reference("planner@T+S")
        rows = {
            f"{recall} {false_resolved}": {
                "recall": recall,
                "false_resolved": false_resolved,
                "value": over_reference(f"{ear_name(recall, false_resolved)}@T+S"),
                "value, first rollout": over_reference(f"{ear_name(recall, false_resolved)}@T+S", first),
                "premature closure": _premature(episodes[f"{ear_name(recall, false_resolved)}@T+S"]),
            }
            for recall, false_resolved in ears
        }
        planner_t = contrast_ci([(1.0, sums[TRANSCRIPT_POLICY])]).as_dict()
        report["turn_costs"][str(turn_cost)] = {"planner@T": planner_t, "ceiling": ceiling, "ears": rows}
        table = Table(
            "recall",
            *(f"false resolved {f}" for f in FALSE_RESOLVED),
            title=f"turn cost {turn_cost}: simulated probe - planner@T ({len(item_ids)} test scenarios "
            f"x {rollouts}); ceiling planner@T+S - planner@T {_show(ceiling)}",
        )
        for recall in RECALLS:
            table.add_row(str(recall), *(_show(rows[f"{recall} {f}"]["value"]) for f in FALSE_RESOLVED))
        console.print(table)
    report["seconds"] = time.perf_counter() - start
    (OUT.parent / "hearing_value.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(report, FIGURE)
    console.print(f"figure: {FIGURE}")
    return report


def _premature(episodes: list[dict]) -> float:
    return sum(e["counts"]["premature_closure"] for e in episodes) / len(episodes)


def _show(estimate: dict) -> str:
    return f"{estimate['point']:+.3f} [{estimate['low']:+.3f}, {estimate['high']:+.3f}]"


def plot(report: dict, path: Path) -> Path:
    """Realized value against recall, one panel per turn cost, one line per false-resolved rate;
    the ceiling shaded, today's probes' recall marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    costs = report["turn_costs"]
    fig, axes = plt.subplots(1, len(costs), figsize=(5.2 * len(costs), 4.4), sharey=True, squeeze=False)
    for ax, (cost, figures) in zip(axes[0], costs.items(), strict=True):
        ceiling = figures["ceiling"]
        ax.axhspan(ceiling["low"], ceiling["high"], color="C2", alpha=0.15)
        ax.axhline(ceiling["point"], color="C2", lw=1.5, label="ceiling: planner@T+S - planner@T")
        ax.axhline(0.0, color="0.3", lw=0.8)
        by_rate: dict[float, list[dict]] = {}
        for row in figures["ears"].values():
            by_rate.setdefault(row["false_resolved"], []).append(row)
        for i, (rate, rows) in enumerate(sorted(by_rate.items())):
            rows = sorted(rows, key=lambda r: r["recall"])
            x = [r["recall"] + 0.006 * (i - 1) for r in rows]
            y = [r["value"]["point"] for r in rows]
            err = [
                [r["value"]["point"] - r["value"]["low"] for r in rows],
                [r["value"]["high"] - r["value"]["point"] for r in rows],
            ]
            ax.errorbar(
                x, y, yerr=err, fmt="o-", ms=4, capsize=2, color=f"C{i}", label=f"false resolved {rate:.0%}"
            )
        for j, (name, recall) in enumerate(TODAY.items()):
            ax.axvline(recall, color="0.5", ls=":" if j else "--", lw=1, label=f"{name} (recall at 1%)")
        ax.set_title(f"turn cost {cost}")
        ax.set_xlabel("recall of genuine acceptances (simulated probe)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("return - planner@T (paired, 95% CI)")
    axes[0][-1].legend(fontsize=7, loc="upper left")
    n = f"{report['scenarios']} test scenarios x {report['rollouts']} rollouts"
    fig.suptitle(f"What hearing of a given quality realizes over planner@T ({n})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def rollouts_arg(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--rollouts must be a positive int, got {text}")
    return value


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=rollouts_arg, default=ROLLOUTS, help="rollouts per test scenario")
    main(parser.parse_args().rollouts)
