"""A better ear: concern probes on the whole turn, speaker-normalized, trained on the training
split's shared assents only, measured on the test split's shared assents per voice.

Each feature kind of ``KINDS`` (``agents.hear2act.audio_probe.turn_features``):
``prosody_relative`` (today's probe: 12 prosodic features of the turn and the same minus the
speaker's opening request) and ``whole_turn_relative`` (those plus the pooled log-mel of the
turn and the same minus the request's: the whole turn, normalized by the speaker). Each probe is
trained as the listening-value benchmark trains its probe (``assents_only``, seed 0), calibrated
on the dev split's shared assents (a 1% false-resolved threshold, and Platt-scaled likelihoods
for the belief planner, ``agents.hear2act.probe_ear``), and reported on the test split's shared
assents: ROC area, recall at 1% false resolved (threshold from the test rows' own reluctant
assents), and recall / false resolved at the dev threshold; overall and per voice. The bounds
beside them are the plan table's calibration targets (docs/speech.md): humans recover resolved
vs reluctant at 0.92; no single acoustic scalar exceeds 0.71 balanced accuracy; probes on all
prosodic features reach 0.87.

Probes are saved under benchmarks/out/better_ear/ (a rerun loads them); figures to
benchmarks/out/better_ear_<renderer>.json.

    python -m benchmarks.hear2act.better_ear [--renderer neural]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.metrics import roc_auc_score

from agents.hear2act.audio_probe import (
    CALIBRATION_REPORT,
    CALIBRATION_SPLIT,
    RESOLVED,
    AudioProbe,
    ProbeConfig,
    build_data,
    calibrate,
    fit,
    per_class_accuracy,
)
from agents.hear2act.probe_ear import LIKELIHOOD_REPORT, calibrate_likelihoods
from hear_gym.envs.hear2act.audio import voice_for
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.renderers import RENDERERS, make_renderer

OUT = Path(__file__).parent.parent / "out"
KINDS = ("prosody_relative", "whole_turn_relative")
POINT = 0.01
TARGETS = {
    "humans (balanced accuracy)": 0.92,
    "all prosodic features (balanced accuracy)": 0.87,
    "best single scalar": 0.71,
}


def probe_path(renderer: str, kind: str) -> Path:
    return OUT / "better_ear" / f"{renderer}_{kind}_{POINT}.safetensors"


def trained_probe(cache: RenderCache, kind: str) -> tuple[AudioProbe, dict]:
    """The probe on ``kind`` (saved or trained), calibrated, and its test figures."""
    renderer = cache.renderer.name
    config = ProbeConfig(
        task="concern", features=kind, renderer=renderer, assents_only=True, max_false_resolved=POINT
    )
    test = build_data(config, "test", cache, seed=config.seed + 3, assents=True)
    path = probe_path(renderer, kind)
    if path.exists():
        probe = AudioProbe.load(path)
        if {LIKELIHOOD_REPORT, CALIBRATION_REPORT} <= set(probe.report):
            return probe, ear_figures(probe, test)
    probe = fit(config, build_data(config, "train", cache, seed=config.seed, assents=True))
    dev = build_data(config, CALIBRATION_SPLIT, cache, seed=config.seed + 2, assents=True)
    probe.threshold = calibrate(probe, dev)
    probe.report = {CALIBRATION_REPORT: per_class_accuracy(probe, dev)}  # the verdict's dev rates
    calibrate_likelihoods(probe, dev)
    probe.save(path)
    return probe, ear_figures(probe, test)


def ear_figures(probe: AudioProbe, data) -> dict:
    """ROC area, recall at 1% false resolved (threshold from the rows' own reluctant assents)
    and, with a calibrated threshold, recall and false resolved at it; overall and per voice."""
    scores, resolved = probe.resolved_log_odds(data.x), data.y == RESOLVED
    voices = np.array([voice_for(s) for s in data.item_ids])

    def figures(mask) -> dict:
        s, r = scores[mask], resolved[mask]
        out = {"n genuine": int(r.sum()), "n reluctant": int((~r).sum())}
        if r.all() or not r.any():
            return out
        cut = np.quantile(s[~r], 1 - POINT)
        out |= {"auc": float(roc_auc_score(r, s)), "recall at 1%": float((s[r] > cut).mean())}
        if probe.threshold is not None:
            out |= {"recall at dev threshold": float((s[r] > probe.threshold).mean())}
            out |= {"false resolved at dev threshold": float((s[~r] > probe.threshold).mean())}
        return out

    return {"all": figures(np.ones(len(scores), bool))} | {
        voice: figures(voices == voice) for voice in sorted(set(voices))
    }


def main(renderer: str = "espeak") -> dict:
    console = Console(width=160)
    start = time.perf_counter()
    (OUT / "better_ear").mkdir(parents=True, exist_ok=True)
    cache = RenderCache(make_renderer(renderer), max_bytes=512 * 2**20, disk_dir=render_store())
    report: dict = {"renderer": renderer, "targets": TARGETS, "probes": {}}
    for kind in KINDS:
        _, report["probes"][kind] = trained_probe(cache, kind)
    table = Table(
        "voice", *(f"{k}: AUC / recall at 1%" for k in KINDS), title=f"test shared assents, {renderer}"
    )
    for voice in report["probes"][KINDS[0]]:
        cells = []
        for kind in KINDS:
            f = report["probes"][kind][voice]
            cells.append(f"{f.get('auc', float('nan')):.3f} / {f.get('recall at 1%', float('nan')):.1%}")
        table.add_row(voice, *cells)
    console.print(table)
    report["seconds"] = time.perf_counter() - start
    (OUT / f"better_ear_{renderer}.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renderer", choices=list(RENDERERS), default="espeak", help="who speaks the user")
    main(parser.parse_args().renderer)
