"""DeliveryPlan with the evidence heard: audio probes per access condition, one-scalar
shortcuts, and planning from the heard source clip beside the paper's controls.

Run: ``python -m benchmarks.deliveryplan.audio [--out benchmarks/out/deliveryplan_audio.json]``.
Prints three tables:

1. probes (``agents.deliveryplan.audio_probe``) per renderer x access (``A`` hears the source
   clip's prosodic features, ``T`` reads the derived labels, ``A+T`` both) x target (15-way key,
   8-way emotion, 2-way intensity): trained on the six training voices, accuracy on the four
   held-out voices (every key x statement: 120 clips) with a 95% bootstrap CI over the eight
   (voice, statement) groups;
2. the best single acoustic scalar per renderer x target, same clips and CIs;
3. intensity from clip length alone (speech duration, a Gaussian-per-class rule): balanced
   accuracy on the held-out voices, per renderer;
4. verifier metrics on the cases whose source voice is held out: ``ProbePlanner`` and
   ``ListeningPlanner`` under ``A`` (they hear the clips; the second hears the edit beside the
   original) beside the blind edit (no evidence opened), the oracle, prior-only and text-only
   controls under ``T`` (fitted on the public training material), with the listening planner's
   paired consistency difference to the blind edit (case bootstrap).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401  (registers the envs)
from agents.deliveryplan.audio_probe import (
    ACCESS,
    TARGETS,
    ProbePlanner,
    held_out_accuracy,
    length_balanced_accuracy,
    single_scalar_accuracies,
    train_probe,
)
from agents.deliveryplan.listening_planner import ListeningPlanner
from agents.deliveryplan.play import mean_rows, play_control
from hear_gym.envs.deliveryplan.cases import generate_cases
from hear_gym.envs.deliveryplan.evidence_audio import TEST_VOICES
from hear_gym.envs.deliveryplan.report import case_metric_rows
from hear_gym.stats.bootstrap import bootstrap

RENDERERS = ("espeak", "praat")
PLAY_METRICS = (
    "evidence_f1",
    "decisive_cue_recall",
    "plan_slot_accuracy_original",
    "plan_slot_accuracy",
    "gcite",
    "counterfactual_consistency",
    "required_change_accuracy",
    "unexpected_change_rate",
)
T_CONTROLS = ("oracle", "prior_only", "text_only")


def held_out_voice_cases() -> list[str]:
    return [c.case_id for c in generate_cases() if c.original.source.voice in TEST_VOICES]


def play_probe_planner(case_ids: list[str], renderer: str, agent=None) -> list[dict]:
    env = gym.make("hear_gym/DeliveryPlan-v0", access="A", actions="text", item_ids=case_ids)
    agent = agent or ProbePlanner(train_probe("key", "A", renderer) if renderer != "espeak" else None)
    rows = []
    for index, case_id in enumerate(case_ids):
        obs, _ = env.reset(seed=0 if index == 0 else None, options={"item_id": case_id})
        agent.reset()
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.act(obs))
        rows.append(case_metric_rows(info["episode"]))
    return rows


def run() -> dict:
    probes = {
        r: {a: {t: held_out_accuracy(train_probe(t, a, r)).as_dict() for t in TARGETS} for a in ACCESS}
        for r in RENDERERS
    }
    scalars = {
        r: {t: {n: e.as_dict() for n, e in single_scalar_accuracies(t, r).items()} for t in TARGETS}
        for r in RENDERERS
    }
    length = {r: length_balanced_accuracy(r) for r in RENDERERS}
    cases = held_out_voice_cases()
    listened = play_probe_planner(cases, "espeak", ListeningPlanner())
    blind = play_control("blind_edit", cases, "public")
    play = {
        "A: probe_planner (espeak)": mean_rows(play_probe_planner(cases, "espeak"), PLAY_METRICS),
        "A: listening_planner (espeak)": mean_rows(listened, PLAY_METRICS),
        "blind_edit": mean_rows(blind, PLAY_METRICS),
    }
    for control in T_CONTROLS:
        play[f"T: {control}"] = mean_rows(play_control(control, cases, "public"), PLAY_METRICS)
    difference = np.array(
        [
            a["counterfactual_consistency"] - b["counterfactual_consistency"]
            for a, b in zip(listened, blind, strict=True)
        ]
    )
    paired = bootstrap(lambda idx: difference[idx].mean(axis=-1), len(difference)).as_dict()
    return {
        "probes": probes,
        "single_scalars": scalars,
        "length_intensity": length,
        "play": play,
        "listening_minus_blind": paired,
        "n_play_cases": len(cases),
    }


def _ci(e: dict) -> str:
    return f"{e['point']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def tables(results: dict) -> list[Table]:
    probes = Table("renderer", "access", *TARGETS, title="Probe accuracy on held-out voices (120 clips)")
    for renderer, by_access in results["probes"].items():
        for access, by_target in by_access.items():
            probes.add_row(renderer, access, *(_ci(by_target[t]) for t in TARGETS))
    scalars = Table("renderer", *TARGETS, title="Best single acoustic scalar (held-out voices)")
    for renderer, by_target in results["single_scalars"].items():
        cells = []
        for target in TARGETS:
            name = max(by_target[target], key=lambda n: by_target[target][n]["point"])
            cells.append(f"{name} {_ci(by_target[target][name])}")
        scalars.add_row(renderer, *cells)
    length = Table("renderer", "balanced accuracy", title="Intensity from clip length (held-out voices)")
    for renderer, accuracy in results["length_intensity"].items():
        length.add_row(renderer, f"{accuracy:.3f}")
    play = Table("agent", *PLAY_METRICS, title=f"Held-out-voice cases ({results['n_play_cases']})")
    for agent, row in results["play"].items():
        play.add_row(agent, *(f"{row[m]:.3f}" for m in PLAY_METRICS))
    play.caption = f"listening_planner - blind_edit, CF: {_ci(results['listening_minus_blind'])}"
    return [probes, scalars, length, play]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    results = run()
    console = Console(width=250)
    for table in tables(results):
        console.print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
