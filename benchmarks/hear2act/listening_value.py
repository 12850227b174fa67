"""What hearing the user is worth in Hear2Act, per turn cost, measured against the planners
(``agents.hear2act.planner``), under prosody-mediated feedback.

A listener saves the turn a transcript policy spends asking about an option the user genuinely
accepted, and loses the gold whenever it takes a reluctant acceptance for a genuine one. The
value of listening is a listener's return minus ``planner@T``'s, the strongest transcript policy
(exact Bayesian planning over the users the construction allows); its ceiling is ``planner@T+S``,
the same planner reading the ground-truth concern state.

1. One concern probe (``agents.hear2act.audio_probe``, prosodic features relative to the
   speaker's request) trained on the training split's shared assents (``assents_only``), and
   calibrated on the dev split at each ``OPERATING_POINTS`` share of reluctant acceptances it
   may take for genuine (``max_false_resolved``). Dev and held-out (test) recall and
   false-resolved rate of each are reported; the planner weighs the probe's verdicts at the dev
   figures (``agents.hear2act.probe_planner.channel_rates``).
2. On the test split, ``--rollouts`` rollouts per scenario, at each turn cost of ``TURN_COSTS``
   (reward ``success``): ``planner@T`` and ``planner@T+S``; with each calibrated probe,
   ``planner@T+S^`` (the env runs the probe and shows its sentence); and ``probe_planner@A+T``,
   the planner running a probe on the A+T audio itself. A+T carries no opening request, so its
   probe is a second one on the turn's own prosodic features (``AUDIO_FEATURES``), trained and
   calibrated alike at ``AUDIO_POINT``. The paper's comparison, rule agents, beside them:
   ``state_aware@T+S``, ``ask_before_confirm@T``, ``ask_until_disclosed@T`` (the best rule
   transcript policy) and ``ask_unless_resolved@T+S^`` with each probe (confirm when the probe
   hears a genuine acceptance, else play ``ask_until_disclosed``).
3. Returns with scenario-bootstrap CIs and paired contrasts (same scenarios, same episode seeds)
   against ``planner@T`` (every row) and, for the paper's comparison, ``ask_until_disclosed@T``.

Every user turn, the probes' training audio included, is rendered by ``--renderer`` (eSpeak by
default). Writes run folders and probes under benchmarks/out/listening_value/ and the figures to
benchmarks/out/listening_value.json (another renderer: ``listening_value_<renderer>``); a rerun
resumes finished runs and loads saved probes.

    python -m benchmarks.hear2act.listening_value               # full size: 3 rollouts
    python -m benchmarks.hear2act.listening_value --rollouts 1  # a third of the episodes
    python -m benchmarks.hear2act.listening_value --rollouts 1 --renderer neural --workers 2

The probes' audio and the episodes' user turns go to the shared on-disk render store
(``render_store``), so a rerun finds them rendered; ``--workers`` plays the episodes in that many
processes (the records do not depend on it: each episode's seed is its own).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.hear2act.audio_probe import (
    CALIBRATION_REPORT,
    CALIBRATION_SPLIT,
    AudioProbe,
    ConcernInferrer,
    ProbeConfig,
    build_data,
    calibrate,
    fit,
    per_class_accuracy,
)
from agents.hear2act.baselines import (
    AskBeforeConfirmAgent,
    AskUnlessResolvedAgent,
    AskUntilDisclosedAgent,
    StateAwareAgent,
)
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.probe_planner import ProbePlannerAgent, channel_rates
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.provenance import file_fingerprint
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.renderers import RENDERERS, make_renderer
from hear_gym.stats.bootstrap import Estimate, contrast_ci

OUT = Path(__file__).resolve().parents[1] / "out"
DEFAULT_RENDERER = "espeak"
OPERATING_POINTS = (0.005, 0.01, 0.02, 0.05)
LISTENER_FEATURES = "prosody_relative"  # each turn against the opening request (T+S^)
AUDIO_FEATURES, AUDIO_POINT = "prosody", 0.01  # probe_planner@A+T's probe: the turn alone
TURN_COSTS = (0.05, 0.10, 0.15)
ROLLOUTS = 3
REFERENCES = (
    ("planner", "T"),
    ("planner", "T+S"),
    ("state_aware", "T+S"),  # the paper's comparison from here on: rule agents
    ("ask_before_confirm", "T"),
    ("ask_until_disclosed", "T"),
)
RULE_AGENTS = {
    "state_aware": StateAwareAgent,
    "ask_before_confirm": AskBeforeConfirmAgent,
    "ask_until_disclosed": AskUntilDisclosedAgent,
    "ask_unless_resolved": AskUnlessResolvedAgent,
}
TRANSCRIPT_POLICY = "planner@T"  # what listening is measured against
PAPER_TRANSCRIPT_POLICY = "ask_until_disclosed@T"  # the paper's comparison, for rule rows
METRICS = ("return", "1st%", "premature closure%")


def out_dir(renderer: str) -> Path:
    """Where a renderer's probes and run folders go (eSpeak's keep their first name)."""
    return OUT / ("listening_value" if renderer == DEFAULT_RENDERER else f"listening_value_{renderer}")


def calibrated_probes(
    cache: RenderCache, features: str, points: tuple[float, ...]
) -> dict[float, AudioProbe]:
    """One probe on ``features`` trained on ``cache``'s renderer, calibrated at every operating
    point of ``points`` (saved, or loaded if saved with its calibration-split figures)."""
    renderer = cache.renderer.name
    paths = {point: probe_path(renderer, features, point) for point in points}
    if all(path.exists() for path in paths.values()):
        loaded = {point: AudioProbe.load(path) for point, path in paths.items()}
        if all(CALIBRATION_REPORT in probe.report for probe in loaded.values()):
            return loaded
    config = ProbeConfig(
        task="concern", features=features, renderer=renderer, assents_only=True, max_false_resolved=points[0]
    )
    trained = fit(config, build_data(config, "train", cache, seed=config.seed, assents=True))
    dev = build_data(config, CALIBRATION_SPLIT, cache, seed=config.seed + 2, assents=True)
    test = build_data(config, "test", cache, seed=config.seed + 3, assents=True)
    probes = {}
    for point, path in paths.items():
        probe = AudioProbe(
            replace(config, max_false_resolved=point), trained.model, trained.mean, trained.std
        )
        probe.threshold = calibrate(probe, dev)
        probe.report = {
            "test assents": per_class_accuracy(probe, test),
            CALIBRATION_REPORT: per_class_accuracy(probe, dev),
        }
        probe.save(path)
        probes[point] = probe
    return probes


def probe_path(renderer: str, features: str, point: float) -> Path:
    kind = "" if features == LISTENER_FEATURES else f"{features}_"
    return out_dir(renderer) / f"concern_assents_{kind}{point}.safetensors"


def runs(
    probes: dict[float, AudioProbe], audio_probe: AudioProbe
) -> dict[str, tuple[list, dict, dict, tuple]]:
    """Run name -> (cells, agent factories, plug-in objects, their provenance); one run per
    probe (an env has one inferrer)."""
    references = [cell(a, access, "prosody") for a, access in REFERENCES]
    out = {"references": (references, {"planner": PlannerAgent, **RULE_AGENTS}, {}, ())}
    for point, probe in probes.items():
        recall, false_resolved = channel_rates(probe)
        planner = partial(PlannerAgent, state_recall=recall, state_false_resolved=false_resolved)
        out[f"listener_{point}"] = (
            [cell("planner", "T+S^", "prosody"), cell("ask_unless_resolved", "T+S^", "prosody")],
            {"planner": planner, **RULE_AGENTS},
            {"state_inferrer": ConcernInferrer(probe)},
            (
                (
                    "state_inferrer",
                    file_fingerprint(probe_path(probe.config.renderer, LISTENER_FEATURES, point)),
                ),
            ),
        )
    out[f"audio_{AUDIO_FEATURES}_{AUDIO_POINT}"] = (
        [cell("probe_planner", "A+T", "prosody")],
        {"probe_planner": partial(ProbePlannerAgent, audio_probe)},
        {},
        (
            (
                "probe_planner",
                file_fingerprint(probe_path(audio_probe.config.renderer, AUDIO_FEATURES, AUDIO_POINT)),
            ),
        ),
    )
    return out


def main(rollouts: int = ROLLOUTS, renderer: str = DEFAULT_RENDERER, workers: int = 1) -> dict:
    out = out_dir(renderer)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(width=180)
    start = time.perf_counter()
    cache = RenderCache(make_renderer(renderer), max_bytes=512 * 2**20, disk_dir=render_store())
    probes = calibrated_probes(cache, LISTENER_FEATURES, OPERATING_POINTS)
    audio_probe = calibrated_probes(cache, AUDIO_FEATURES, (AUDIO_POINT,))[AUDIO_POINT]
    probe_table = Table(
        "features",
        "max false resolved (dev)",
        "log-odds threshold",
        "genuine heard (dev)",
        "reluctant taken (dev)",
        "genuine heard (test)",
        "reluctant taken (test)",
        title="concern probe on the shared assents",
    )
    report: dict = {"renderer": renderer, "rollouts": rollouts, "probes": {}, "turn_costs": {}}
    for probe in (*probes.values(), audio_probe):
        point, features = probe.config.max_false_resolved, probe.config.features
        dev, test = probe.report[CALIBRATION_REPORT], probe.report["test assents"]
        figures = {"threshold": probe.threshold, "dev": dev, "test": test}
        report["probes"][f"{features} {point}"] = figures
        probe_table.add_row(
            features,
            f"{point:.3f}",
            f"{probe.threshold:.2f}",
            *(f"{x:.3f}" for split in (dev, test) for x in (split["resolved"], 1 - split["unresolved"])),
        )
    console.print(probe_table)
    item_ids = tuple(s.scenario_id for s in scenarios_for("test"))
    for turn_cost in TURN_COSTS:
        sums = {}
        for name, (cells, agents, objects, plugins) in runs(probes, audio_probe).items():
            config = run_config(
                cells,
                item_ids,
                rollouts=rollouts,
                plugins=plugins,
                turn_cost=turn_cost,
                reward="success",
                renderer=renderer,
            )
            folder = out / f"cost{turn_cost}_r{rollouts}_{name}"
            env_objects = {**objects, "audio_cache_dir": render_store()}
            evaluate(folder, config, agents, progress=True, env_objects=env_objects, workers=workers)
            for record_cell, episodes in _by_cell(read_results(folder / "results.jsonl")).items():
                label = record_cell.removesuffix("/prosody")
                if name != "references":
                    label = f"{label} ({name.split('_', 1)[1]})"
                sums[label] = {m: scenario_sums(episodes, item_ids, METRICS_BY_NAME[m]) for m in METRICS}
        report["turn_costs"][str(turn_cost)] = rows = {}
        against = (TRANSCRIPT_POLICY, PAPER_TRANSCRIPT_POLICY)
        table = Table(
            "cell",
            *METRICS,
            *(f"return - {t}" for t in against),
            title=f"turn cost {turn_cost}: {len(item_ids)} test scenarios x {rollouts} rollouts, {renderer}",
        )
        for label, by_metric in sums.items():
            row = {m: contrast_ci([(1.0, by_metric[m])]) for m in METRICS}
            for policy in against:
                row[f"return - {policy}"] = contrast_ci(
                    [(1.0, by_metric["return"]), (-1.0, sums[policy]["return"])]
                )
            rows[label] = {k: v.as_dict() for k, v in row.items()}
            table.add_row(label, *(_show(k, v) for k, v in row.items()))
        console.print(table)
    report["seconds"] = time.perf_counter() - start
    (OUT / f"{out.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _by_cell(records: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(record["cell"], []).append(record)
    return out


def _show(key: str, estimate: Estimate) -> str:
    if key in ("1st%", "premature closure%"):
        return estimate.percent()
    sign = "+" if key.startswith("return - ") else ""
    return f"{estimate.point:{sign}.3f} [{estimate.low:{sign}.3f}, {estimate.high:{sign}.3f}]"


def rollouts_arg(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--rollouts must be a positive int, got {text}")
    return value


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=rollouts_arg, default=ROLLOUTS, help="rollouts per test scenario")
    parser.add_argument(
        "--renderer", choices=list(RENDERERS), default=DEFAULT_RENDERER, help="who speaks the user"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes that play the episodes (default 1)")
    args = parser.parse_args()
    main(args.rollouts, args.renderer, args.workers)
