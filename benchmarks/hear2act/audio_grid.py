"""The paper's condition grid (Tables 3/4/8, Figure 4) with honest rule agents, per renderer.

All audio uses the delivery plan table ``PROSODY`` (the default, "paper").

1. Train three audio probes on rendered training-split audio (first ``TRAIN_SCENARIOS`` train
   scenarios, every reaction under both feedback realizations): the concern probe for T+S^
   (prosodic features relative to the speaker's request) and two generic-affect probes for
   T+SER (prosodic features; pooled log-mel), the paper's two SER systems' stand-ins.
2. On the held-out test split, both feedback realizations, one rollout per scenario:
   transcript_only under T and A+T (audio available, but this agent cannot use it), and the
   state-aware decision stage under T+S, T+S^ and both T+SER; the label-fidelity ladder
   (all-resolved, all-unresolved, shuffled state on T+S).
3. One table of 1st% / OptSat% / SvcSat% with scenario-bootstrap CIs per renderer, and paired
   contrasts (same scenarios, same episode seeds) across runs.

Writes run folders and probes under benchmarks/out/audio_grid/, the Markdown tables to
benchmarks/out/audio_grid.md and the ladder figure to benchmarks/out/label_ladder.png (with
``--renderer``, a subset of the registered renderers: ``audio_grid_<renderers>.md`` and
``label_ladder_<renderers>.png``; with ``--train-scenarios`` below the default, ``_train<n>`` is
added to these names and to the probes' and runs' names). A rerun resumes the finished runs and
loads the saved probes. The probes' training audio goes to the shared render store
(``render_store``), where the cross-renderer table's Hear2Act probe leaves the same turns.

    python -m benchmarks.hear2act.audio_grid                     # every registered renderer
    python -m benchmarks.hear2act.audio_grid --renderer neural   # one of them
    python -m benchmarks.hear2act.audio_grid --renderer neural --train-scenarios 40  # smaller probes
    python -m benchmarks.hear2act.audio_grid --renderer neural --workers 2  # episodes on 2 cores

The evaluations' user turns go to the same render store (``audio_cache_dir``), so a rerun, or a
second job that plays the same episodes, finds them rendered. ``--workers`` plays the episodes
in that many processes; the records do not depend on it (each episode's seed is its own).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console

from agents.hear2act.audio_probe import (
    AffectPredictor,
    AudioProbe,
    ConcernInferrer,
    ProbeConfig,
    build_data,
    fit,
    per_class_accuracy,
)
from agents.hear2act.baselines import StateAwareAgent, TranscriptOnlyAgent
from hear_gym.core.run_config import Cell
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.plots import LADDER_RUNGS, ladder_plot
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import RENDERERS, make_renderer
from hear_gym.stats.bootstrap import contrast_ci

OUT = Path(__file__).resolve().parents[1] / "out" / "audio_grid"
TRAIN_SCENARIOS = 96
PROSODY = DEFAULT_PROSODY
FEEDBACKS = ("prosody", "explicit")
AGENTS = {"transcript_only": TranscriptOnlyAgent, "state_aware": StateAwareAgent}
PROBES = {
    "concern": ("concern", "prosody_relative"),
    "affect_prosody": ("affect", "prosody"),
    "affect_logmel": ("affect", "logmel"),
}
OUTCOMES = ("1st%", "OptSat%", "SvcSat%")


def run_tag(renderer: str, train_scenarios: int) -> str:
    """What names a renderer's probes and runs (probes trained on fewer scenarios are others)."""
    reduced = "" if train_scenarios == TRAIN_SCENARIOS else f"_train{train_scenarios}"
    return f"{renderer}_{PROSODY}{reduced}"


def train_probes(renderer: str, train_scenarios: int) -> dict[str, AudioProbe]:
    cache = RenderCache(make_renderer(renderer), max_bytes=768 * 2**20, disk_dir=render_store())
    probes = {}
    for name, (task, features) in PROBES.items():
        path = OUT / f"{run_tag(renderer, train_scenarios)}_{name}.safetensors"
        if path.exists():
            probes[name] = AudioProbe.load(path)
            continue
        config = ProbeConfig(
            task=task, features=features, renderer=renderer, prosody=PROSODY, max_scenarios=train_scenarios
        )
        probe = fit(config, build_data(config, "train", cache, seed=0))
        probe.report = {"test": per_class_accuracy(probe, build_data(config, "test", cache, seed=1))}
        probe.save(path)
        probes[name] = probe
    return probes


def runs_for(renderer: str, probes: dict[str, AudioProbe]) -> dict[str, tuple[list[Cell], dict, dict]]:
    """Run name -> (cells, JSON gym.make kwargs, plug-in objects). One run per set of plug-ins."""
    base = {"renderer": renderer, "prosody": PROSODY}
    return {
        "main": (
            [cell("transcript_only", "T", fb) for fb in FEEDBACKS]
            + [cell("transcript_only", "A+T", fb) for fb in FEEDBACKS]
            + [cell("state_aware", access, fb) for fb in FEEDBACKS for access in ("T+S", "T+S^", "T+SER")],
            base,
            {
                "state_inferrer": ConcernInferrer(probes["concern"]),
                "affect_classifier": AffectPredictor(probes["affect_prosody"]),
            },
        ),
        "ser_logmel": (
            [cell("state_aware", "T+SER", fb) for fb in FEEDBACKS],
            base,
            {"affect_classifier": AffectPredictor(probes["affect_logmel"])},
        ),
        **{
            f"ladder_{mode}": (
                [cell("state_aware", "T+S", fb) for fb in FEEDBACKS],
                {**base, "state_intervention": mode},
                {},
            )
            for mode in ("all_resolved", "all_unresolved", "shuffled")
        },
    }


ROWS = (  # label, run, cell name template
    ("Transcript only (T)", "main", "transcript_only@T/{fb}"),
    ("Audio + transcript (A+T)", "main", "transcript_only@A+T/{fb}"),
    ("Generic affect, prosody (T+SER)", "main", "state_aware@T+SER/{fb}"),
    ("Generic affect, log-mel (T+SER)", "ser_logmel", "state_aware@T+SER/{fb}"),
    ("Task-aligned state (T+S^)", "main", "state_aware@T+S^/{fb}"),
    ("Ground-truth state (T+S)", "main", "state_aware@T+S/{fb}"),
    ("Ladder: all-resolved state", "ladder_all_resolved", "state_aware@T+S/{fb}"),
    ("Ladder: shuffled state", "ladder_shuffled", "state_aware@T+S/{fb}"),
    ("Ladder: all-unresolved state", "ladder_all_unresolved", "state_aware@T+S/{fb}"),
)
CONTRASTS = (
    ("A+T - T", 1, 0),
    ("T+S - T", 5, 0),
    ("T+S^ - T+S", 4, 5),
    ("SER(prosody) - T+S^", 2, 4),
    ("SER(log-mel) - T+S^", 3, 4),
    ("all-resolved - T", 6, 0),
    ("shuffled - all-resolved", 7, 6),
    ("all-unresolved - shuffled", 8, 7),
    ("correct - all-unresolved", 5, 8),
)


LADDER = (
    "Transcript only (T)",
    "Ladder: all-resolved state",
    "Ladder: shuffled state",
    "Ladder: all-unresolved state",
    "Ground-truth state (T+S)",
)


def main(
    renderers: tuple[str, ...] = tuple(RENDERERS), train_scenarios: int = TRAIN_SCENARIOS, workers: int = 1
) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    item_ids = tuple(s.scenario_id for s in scenarios_for("test"))
    console = Console(width=170)
    lines, record, ladders = [], {}, {}
    for renderer in renderers:
        start = time.perf_counter()
        probes = train_probes(renderer, train_scenarios)
        records = {}
        for run, (cells, env_kwargs, objects) in runs_for(renderer, probes).items():
            plugins = tuple((k, type(v).__name__) for k, v in objects.items())
            config = run_config(cells, item_ids, plugins=plugins, **env_kwargs)
            folder = OUT / f"{run_tag(renderer, train_scenarios)}_{run}"
            env_objects = {**objects, "audio_cache_dir": render_store()}
            evaluate(folder, config, AGENTS, progress=True, env_objects=env_objects, workers=workers)
            records[run] = read_results(folder / "results.jsonl")
        sums = {}
        for label, run, template in ROWS:
            for fb in FEEDBACKS:
                episodes = [r for r in records[run] if r["cell"] == template.format(fb=fb)]
                sums[label, fb] = {m: scenario_sums(episodes, item_ids, METRICS_BY_NAME[m]) for m in OUTCOMES}
        ladders[f"({renderer})"] = {
            fb: {
                rung: contrast_ci([(1.0, sums[label, fb]["1st%"])]).as_dict()
                for rung, label in zip(LADDER_RUNGS, LADDER, strict=True)
            }
            for fb in FEEDBACKS
        }
        elapsed = time.perf_counter() - start
        lines += [
            f"### Renderer: {renderer}, prosody {PROSODY} ({elapsed:.0f} s; probes trained on "
            f"{train_scenarios} train scenarios, held-out accuracy on as many test scenarios below)",
            "",
        ]
        for name, probe in probes.items():
            lines.append(
                f"- {name} probe ({probe.config.features}): held-out balanced accuracy "
                f"{probe.report['test']['balanced']:.3f} "
                + ", ".join(
                    f"{k} {v:.3f}" for k, v in probe.report["test"].items() if k not in ("balanced", "n")
                )
            )
        lines += [
            "",
            "| input / representation | "
            + " | ".join(f"{m} ({fb})" for fb in FEEDBACKS for m in OUTCOMES)
            + " |",
            "|---|" + "---|" * (len(OUTCOMES) * len(FEEDBACKS)),
        ]
        for label, _, _ in ROWS:
            cells = []
            for fb in FEEDBACKS:
                for m in OUTCOMES:
                    est = contrast_ci([(1.0, sums[label, fb][m])])
                    cells.append(f"{100 * est.point:.1f} [{100 * est.low:.1f}, {100 * est.high:.1f}]")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", "| paired 1st% contrast | prosody | explicit |", "|---|---|---|"]
        for name, a, b in CONTRASTS:
            cells = []
            for fb in FEEDBACKS:
                est = contrast_ci([(1.0, sums[ROWS[a][0], fb]["1st%"]), (-1.0, sums[ROWS[b][0], fb]["1st%"])])
                cells.append(f"{100 * est.point:+.1f} [{100 * est.low:+.1f}, {100 * est.high:+.1f}]")
                record[f"{renderer}|{fb}|{name}"] = est.as_dict()
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        console.print("\n".join(lines[-(len(ROWS) + len(CONTRASTS) + 8) :]))
    suffix = "" if set(renderers) == set(RENDERERS) else "_" + "_".join(renderers)
    suffix += "" if train_scenarios == TRAIN_SCENARIOS else f"_train{train_scenarios}"
    (OUT.parent / f"audio_grid{suffix}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ladder_plot(ladders, OUT.parent / f"label_ladder{suffix}.png")
    (OUT.parent / f"audio_grid{suffix}.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--renderer",
        action="append",
        choices=list(RENDERERS),
        help="a renderer to run (repeatable; default: every registered one)",
    )
    parser.add_argument(
        "--train-scenarios",
        type=int,
        default=TRAIN_SCENARIOS,
        help=f"train (and probe-report test) scenarios per probe (default {TRAIN_SCENARIOS})",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes that play the episodes (default 1)")
    args = parser.parse_args()
    main(tuple(args.renderer or RENDERERS), args.train_scenarios, args.workers)
