"""Does acting on beliefs pay where thresholds do not? The belief planner
(``agents.hear2act.belief_planner``) against ``planner@T``, on simulated ears of controlled AUC
and on today's eSpeak concern probe, held out.

1. Simulated: ``belief_planner@T+S`` on a ``ScoreEar`` of each AUC of ``AUCS`` (calibrated
   Gaussian scores on the T+S tag, errors per turn from the episode's seed), at each turn cost.
2. Real: the listening-value benchmark's assent probe (prosodic features against the speaker's
   opening request, trained on the training split's shared assents; ``calibrated_probes`` of
   ``benchmarks/hear2act_listening_value.py``), its score Platt-calibrated on the dev split's
   shared assents (``agents.hear2act.probe_ear.calibrate_likelihoods``). ``belief_planner@T+S^``
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

import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.metrics import roc_auc_score

from agents.hear2act.audio_probe import CALIBRATION_SPLIT, RESOLVED, ConcernInferrer, ProbeConfig, build_data
from agents.hear2act.belief_planner import BeliefPlannerAgent
from agents.hear2act.ears import SimulatedEar
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.probe_ear import InferredEar, LikelihoodInferrer, calibrate_likelihoods
from agents.hear2act.probe_planner import channel_rates
from agents.hear2act.simulated_ear import ScoreEar
from benchmarks.hear2act_listening_value import LISTENER_FEATURES, calibrated_probes
from hear_gym.envs.hear2act.audio import voice_for
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
POINT = 0.01  # the real probe's verdict operating point (false resolved on dev assents)
RENDERER = "espeak"


def real_probe(cache: RenderCache):
    """The assent probe at ``POINT``, with calibrated likelihoods and its test-split figures."""
    probe = calibrated_probes(cache, LISTENER_FEATURES, (POINT,))[POINT]
    config = ProbeConfig(task="concern", features=LISTENER_FEATURES, renderer=RENDERER, assents_only=True)
    dev = build_data(config, CALIBRATION_SPLIT, cache, seed=config.seed + 2, assents=True)
    calibrate_likelihoods(probe, dev)
    test = build_data(config, "test", cache, seed=config.seed + 3, assents=True)
    return probe, ear_figures(probe, test)


def ear_figures(probe, data) -> dict:
    """ROC area and recall at 1% false resolved (threshold from the same rows' reluctant
    acceptances), overall and per voice."""
    scores, resolved = probe.resolved_log_odds(data.x), data.y == RESOLVED
    voices = np.array([voice_for(s) for s in data.scenario_ids])

    def figures(mask) -> dict:
        s, r = scores[mask], resolved[mask]
        if r.all() or not r.any():
            return {"n": int(mask.sum())}
        cut = np.quantile(s[~r], 0.99)
        return {
            "auc": float(roc_auc_score(r, s)),
            "recall at 1%": float((s[r] > cut).mean()),
            "n": int(mask.sum()),
        }

    out = {"all": figures(np.ones(len(scores), bool))}
    out |= {voice: figures(voices == voice) for voice in sorted(set(voices))}
    return out


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


def real_runs(probe) -> list[tuple]:
    """The belief planner and the threshold planner on the real probe (T+S^)."""
    recall, false_resolved = channel_rates(probe)
    objects = {"audio_cache_dir": render_store()}
    verdicts = partial(PlannerAgent, state_recall=recall, state_false_resolved=false_resolved)
    return [
        (
            "real_belief",
            [cell("belief_planner", "T+S^", "prosody")],
            {"belief_planner": partial(BeliefPlannerAgent, InferredEar(probe))},
            {**objects, "state_inferrer": LikelihoodInferrer(probe)},
        ),
        (
            "real_verdict",
            [cell("planner", "T+S^", "prosody")],
            {"planner": verdicts},
            {**objects, "state_inferrer": ConcernInferrer(probe)},
        ),
    ]


def play(
    runs: list[tuple], turn_cost: float, rollouts: int, scenario_ids: tuple[str, ...]
) -> dict[str, list[dict]]:
    """Cell label (real-probe runs marked) -> episode records, every run played or resumed."""
    episodes: dict[str, list[dict]] = {}
    for name, cells, agents, objects in runs:
        kwargs = {"renderer": RENDERER} if objects else {}
        config = run_config(
            cells, scenario_ids, rollouts=rollouts, turn_cost=turn_cost, reward="success", **kwargs
        )
        folder = OUT / f"cost{turn_cost}_r{rollouts}_{name}"
        evaluate(folder, config, agents, progress=True, env_objects=objects)
        for record in read_results(folder / "results.jsonl"):
            label = record["cell"].removesuffix("/prosody")
            episodes.setdefault(f"{label} ({name})" if name.startswith("real") else label, []).append(record)
    return episodes


def contrasts(episodes: dict[str, list[dict]], scenario_ids: tuple[str, ...]) -> dict[str, dict]:
    sums = {k: scenario_sums(v, scenario_ids, METRICS_BY_NAME["return"]) for k, v in episodes.items()}
    rows = {}
    for label in sums:
        gap = contrast_ci([(1.0, sums[label]), (-1.0, sums["planner@T"])])
        closure = sum(e["counts"]["premature_closure"] for e in episodes[label]) / len(episodes[label])
        rows[label] = {"return - planner@T": gap.as_dict(), "premature closure": closure}
    return rows


def main(turn_costs: tuple[float, ...] = TURN_COSTS, rollouts: int = 1, simulated_only: bool = False) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    console = Console(width=160)
    start = time.perf_counter()
    scenario_ids = tuple(s.scenario_id for s in scenarios_for("test"))
    episodes = {cost: play(simulated_runs(), cost, rollouts, scenario_ids) for cost in turn_costs}
    report: dict = {"rollouts": rollouts, "turn_costs": {}}
    if not simulated_only:
        cache = RenderCache(make_renderer(RENDERER), max_bytes=512 * 2**20, disk_dir=render_store())
        probe, figures = real_probe(cache)
        report |= {"probe": figures, "calibration": probe.report["likelihoods"]}
        for cost in turn_costs:
            episodes[cost] |= play(real_runs(probe), cost, rollouts, scenario_ids)
        probe_table = Table(
            "voice", "AUC", "recall at 1% false resolved", "n", title="eSpeak assent probe, test assents"
        )
        for voice, f in figures.items():
            probe_table.add_row(
                voice,
                f"{f.get('auc', float('nan')):.3f}",
                f"{f.get('recall at 1%', float('nan')):.3f}",
                str(f["n"]),
            )
        console.print(probe_table)
    for cost in turn_costs:
        rows = report["turn_costs"][str(cost)] = contrasts(episodes[cost], scenario_ids)
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
    (OUT.parent / "belief_listening.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turn-costs", type=float, nargs="+", default=list(TURN_COSTS))
    parser.add_argument("--rollouts", type=int, default=1)
    parser.add_argument("--simulated-only", action="store_true", help="leave out the real probe")
    args = parser.parse_args()
    main(tuple(args.turn_costs), args.rollouts, args.simulated_only)
