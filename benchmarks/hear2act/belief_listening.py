"""Does acting on beliefs pay where thresholds do not? The belief planner
(``agents.hear2act.belief_planner``) against ``planner@T``, on simulated ears of controlled AUC
and on today's eSpeak concern probe, held out.

1. Simulated: ``belief_planner@T+S`` on a ``ScoreEar`` of each AUC of ``AUCS`` (calibrated
   Gaussian scores on the T+S tag, errors per turn from the episode's seed), at each turn cost.
2. Real: a concern probe of ``benchmarks/hear2act/better_ear.py`` (``--features``; by default
   today's: prosodic features against the speaker's opening request, trained on the training
   split's shared assents), its score Platt-calibrated on the dev split's shared assents
   (``agents.hear2act.probe_ear.calibrate_likelihoods``). ``belief_planner@T+S^``
   hears it through ``LikelihoodInferrer``; ``planner@T+S^`` reads the same probe's 1% verdict
   at its dev rates (the threshold reading) beside it. The probe's ROC area and recall at 1%
   false resolved on the test split's shared assents, per voice, come with it.

Paired contrasts against ``planner@T`` (same scenarios, same episode seeds), scenario bootstrap.
Run folders under benchmarks/out/belief_listening/ (a rerun resumes); figures to
benchmarks/out/belief_listening.json and the PNG beside this script.

    python -m benchmarks.hear2act.belief_listening                      # every turn cost, 1 rollout
    python -m benchmarks.hear2act.belief_listening --turn-costs 0.1     # the moonshot's cost
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.hear2act.audio_probe import ConcernInferrer
from agents.hear2act.belief_planner import BeliefPlannerAgent
from agents.hear2act.ears import SimulatedEar
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.probe_ear import InferredEar, LikelihoodInferrer
from agents.hear2act.probe_planner import channel_rates
from agents.hear2act.simulated_ear import ScoreEar
from benchmarks.hear2act.better_ear import trained_probe
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.renderers import make_renderer
from hear_gym.stats.bootstrap import contrast_ci

HERE = Path(__file__).parent
OUT = HERE.parent / "out" / "belief_listening"
FIGURE = HERE / "belief_listening.png"
TURN_COSTS = (0.05, 0.10, 0.15)
AUCS = (0.8, 0.93, 0.98)  # 0.93: the equal-variance ROC through today's probe's 42% at 1%
WORDS_AHEAD_AUC = 0.93  # also played with listen_ahead=False
RENDERER = "espeak"


def simulated_runs() -> list[tuple]:
    """(name, cells, agent factories, env objects) of the references and the simulated ears."""
    runs = [
        ("references", [cell("planner", a, "prosody") for a in ("T", "T+S")], {"planner": PlannerAgent}, None)
    ]
    for auc in AUCS:
        name = f"belief_auc{auc}"
        runs.append(
            (
                name,
                [cell(name, "T+S", "prosody")],
                {name: partial(BeliefPlannerAgent, SimulatedEar(ScoreEar(auc)))},
                None,
            )
        )
    name = f"belief_auc{WORDS_AHEAD_AUC}_words_ahead"
    factory = partial(BeliefPlannerAgent, SimulatedEar(ScoreEar(WORDS_AHEAD_AUC)), listen_ahead=False)
    runs.append((name, [cell(name, "T+S", "prosody")], {name: factory}, None))
    return runs


def real_runs(probe, features: str) -> list[tuple]:
    """The belief planner and the threshold planner on the real probe (T+S^)."""
    recall, false_resolved = channel_rates(probe)
    objects = {"audio_cache_dir": render_store()}
    verdicts = partial(PlannerAgent, state_recall=recall, state_false_resolved=false_resolved)
    return [
        (
            f"real_belief_{features}",
            [cell("belief_planner", "T+S^", "prosody")],
            {"belief_planner": partial(BeliefPlannerAgent, InferredEar(probe))},
            {**objects, "state_inferrer": LikelihoodInferrer(probe)},
        ),
        (
            f"real_verdict_{features}",
            [cell("planner", "T+S^", "prosody")],
            {"planner": verdicts},
            {**objects, "state_inferrer": ConcernInferrer(probe)},
        ),
    ]


def play(
    runs: list[tuple], turn_cost: float, rollouts: int, item_ids: tuple[str, ...]
) -> dict[str, list[dict]]:
    """Cell label (real-probe runs marked) -> episode records, every run played or resumed."""
    episodes: dict[str, list[dict]] = {}
    for name, cells, agents, objects in runs:
        kwargs = {"renderer": RENDERER} if objects else {}
        config = run_config(
            cells, item_ids, rollouts=rollouts, turn_cost=turn_cost, reward="success", **kwargs
        )
        folder = OUT / f"cost{turn_cost}_r{rollouts}_{name}"
        evaluate(folder, config, agents, progress=True, env_objects=objects)
        for record in read_results(folder / "results.jsonl"):
            label = record["cell"].removesuffix("/prosody")
            episodes.setdefault(f"{label} ({name})" if name.startswith("real") else label, []).append(record)
    return episodes


def contrasts(episodes: dict[str, list[dict]], item_ids: tuple[str, ...]) -> dict[str, dict]:
    sums = {k: scenario_sums(v, item_ids, METRICS_BY_NAME["return"]) for k, v in episodes.items()}
    rows = {}
    for label in sums:
        gap = contrast_ci([(1.0, sums[label]), (-1.0, sums["planner@T"])])
        closure = sum(e["counts"]["premature_closure"] for e in episodes[label]) / len(episodes[label])
        rows[label] = {"return - planner@T": gap.as_dict(), "premature closure": closure}
    return rows


def main(
    turn_costs: tuple[float, ...] = TURN_COSTS,
    rollouts: int = 1,
    simulated_only: bool = False,
    features: str = "prosody_relative",
    real_only: bool = False,
) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    console = Console(width=160)
    start = time.perf_counter()
    item_ids = tuple(s.scenario_id for s in scenarios_for("test"))
    episodes: dict[float, dict[str, list[dict]]] = {cost: {} for cost in turn_costs}
    report: dict = {"rollouts": rollouts, "turn_costs": {}}
    if not simulated_only:  # the real probe first: its runs are the cheaper ones
        cache = RenderCache(make_renderer(RENDERER), max_bytes=512 * 2**20, disk_dir=render_store())
        probe, figures = trained_probe(cache, features)
        report |= {"probe": figures, "features": features, "calibration": probe.report["likelihoods"]}
        for cost in turn_costs:
            episodes[cost] |= play(real_runs(probe, features), cost, rollouts, item_ids)
        probe_table = Table(
            "voice", "AUC", "recall at 1% false resolved", "n", title="eSpeak assent probe, test assents"
        )
        for voice, f in figures.items():
            probe_table.add_row(
                voice,
                f"{f.get('auc', float('nan')):.3f}",
                f"{f.get('recall at 1%', float('nan')):.3f}",
                f"{f['n genuine']} + {f['n reluctant']}",
            )
        console.print(probe_table)
    for cost in turn_costs:
        episodes[cost] |= play(simulated_runs()[: 1 if real_only else None], cost, rollouts, item_ids)
    for cost in turn_costs:
        rows = report["turn_costs"][str(cost)] = contrasts(episodes[cost], item_ids)
        table = Table(
            "cell",
            "return - planner@T [95% CI]",
            "premature closure",
            title=f"turn cost {cost}, test split x {rollouts}",
        )
        for label, row in rows.items():
            g = row["return - planner@T"]
            table.add_row(
                label,
                f"{g['point']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}]",
                f"{row['premature closure']:.1%}",
            )
        console.print(table)
    report["seconds"] = time.perf_counter() - start
    name = "belief_listening" if not real_only else f"belief_listening_{features}"
    (OUT.parent / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    if real_only:
        return report
    plot(report, FIGURE)
    console.print(f"figure: {FIGURE}")
    return report


def plot(report: dict, path: Path) -> Path:
    """Value over ``planner@T`` against the ear's ROC area, one panel per turn cost: the belief
    planner on simulated ears, the real probe's belief and threshold planners at its test AUC."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    costs = report["turn_costs"]
    fig, axes = plt.subplots(1, len(costs), figsize=(5.4 * len(costs), 4.4), sharey=True, squeeze=False)
    real_auc = report.get("probe", {}).get("all", {}).get("auc")
    for ax, (cost, rows) in zip(axes[0], costs.items(), strict=True):
        ceiling = rows["planner@T+S"]["return - planner@T"]
        ax.axhspan(ceiling["low"], ceiling["high"], color="C2", alpha=0.15)
        ax.axhline(ceiling["point"], color="C2", lw=1.5, label="ceiling: planner@T+S - planner@T")
        ax.axhline(0.0, color="0.3", lw=0.8)
        for key, marker, color, shift, label in (
            ("belief_auc{}@T+S", "o-", "C0", 0.0, "belief planner, simulated ear (listens ahead)"),
            ("belief_auc{}_words_ahead@T+S", "s", "C1", 0.003, "belief planner, simulated ear (words ahead)"),
        ):
            points = [
                (auc, rows[key.format(auc)]["return - planner@T"]) for auc in AUCS if key.format(auc) in rows
            ]
            if points:
                _errorbar(ax, [a + shift for a, _ in points], [g for _, g in points], marker, color, label)
        if real_auc is not None:
            features = report["features"]
            for label, shift, color, name in (
                (f"belief_planner@T+S^ (real_belief_{features})", 0.0, "C3", "belief"),
                (f"planner@T+S^ (real_verdict_{features})", 0.003, "C4", "1% verdict"),
            ):
                if label in rows:
                    probe = f"{features} probe, {name}"
                    _errorbar(ax, [real_auc + shift], [rows[label]["return - planner@T"]], "D", color, probe)
        ax.set_title(f"turn cost {cost}")
        ax.set_xlabel("ROC area of the ear (genuine vs other turns)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("return - planner@T (paired, 95% CI)")
    axes[0][-1].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Acting on an ear's likelihoods (96 test scenarios x {report['rollouts']})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _errorbar(ax, x, estimates, marker, color, label) -> None:
    y = [g["point"] for g in estimates]
    err = [[g["point"] - g["low"] for g in estimates], [g["high"] - g["point"] for g in estimates]]
    ax.errorbar(x, y, yerr=err, fmt=marker, color=color, ms=5, capsize=2, label=label)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turn-costs", type=float, nargs="+", default=list(TURN_COSTS))
    parser.add_argument("--rollouts", type=int, default=1)
    parser.add_argument("--simulated-only", action="store_true", help="leave out the real probe")
    parser.add_argument(
        "--features", default="prosody_relative", help="the real probe's features (better_ear.KINDS)"
    )
    parser.add_argument("--real-only", action="store_true", help="the real probe and the references alone")
    args = parser.parse_args()
    main(tuple(args.turn_costs), args.rollouts, args.simulated_only, args.features, args.real_only)
