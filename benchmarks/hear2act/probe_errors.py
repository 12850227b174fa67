"""Where today's eSpeak concern probe errs: by delivery label, by voice, by scenario, and by the
kind of turn it hears in real dialogues.

The probe is today's assent probe at 1% false resolved on the dev split's shared assents
(``prosody_relative`` of ``benchmarks/hear2act/better_ear.py``, the listening-value benchmark's
recipe); ``--features whole_turn_relative`` looks at the better ear instead.

1. On the test split's shared assents (every candidate's assent, ``ASSENT_DRAWS`` realizations):
   the share heard as genuine per delivery label, per voice, and how unevenly its false
   "resolved" verdicts fall on scenarios (dispersion index: observed variance of per-scenario
   counts over the binomial variance at the overall rate; 1 = independent errors).
2. In the dialogues ``planner@T+S^`` played with it (the run folders of
   ``benchmarks/hear2act/belief_listening.py`` with the same ``--features``, if it has run): the
   verdict on each user turn, by the turn's reaction kind, against the turn's true resolution.

    python -m benchmarks.hear2act.probe_errors [--features whole_turn_relative]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from agents.hear2act.audio_probe import RESOLVED, ProbeConfig, build_data, turn_features
from benchmarks.hear2act.better_ear import trained_probe
from hear_gym.envs.hear2act.audio import user_turn_request, voice_for
from hear_gym.envs.hear2act.user.states import RESOLVED_DELIVERY_LABELS
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.renderers import make_renderer

HERE = Path(__file__).parent
OUT = HERE.parent / "out"
DIALOGUES = OUT / "belief_listening"


def heard_share(verdicts: np.ndarray, groups: np.ndarray) -> dict[str, tuple[float, int]]:
    return {g: (float(verdicts[groups == g].mean()), int((groups == g).sum())) for g in sorted(set(groups))}


def dispersion(false_resolved: np.ndarray, scenarios: np.ndarray) -> dict[str, float]:
    """Per-scenario counts of false "resolved" among reluctant assents against independent errors."""
    ids = sorted(set(scenarios))
    counts = np.array([false_resolved[scenarios == s].sum() for s in ids], dtype=float)
    trials = np.array([(scenarios == s).sum() for s in ids], dtype=float)
    rate = counts.sum() / trials.sum()
    expected_var = (trials * rate * (1 - rate)).sum()
    observed_var = ((counts - trials * rate) ** 2).sum()
    top = np.sort(counts)[::-1]
    tenth = max(1, len(ids) // 10)
    return {
        "rate": float(rate),
        "dispersion index": float(observed_var / expected_var) if expected_var else float("nan"),
        "scenarios with any": int((counts > 0).sum()),
        "scenarios": len(ids),
        f"share in the top {tenth} scenarios": float(top[:tenth].sum() / max(1.0, counts.sum())),
    }


def dialogue_turns(probe, cache: RenderCache, features: str) -> dict[str, Counter]:
    """Reaction kind -> Counter of (truly resolved, heard resolved) over every user turn after the
    opening request in the ``planner@T+S^`` dialogues."""
    out: dict[str, Counter] = defaultdict(Counter)
    for folder in sorted(DIALOGUES.glob(f"*_real_verdict_{features}")):
        for record in read_results(folder / "results.jsonl"):
            speaker, turns = record["item_id"], record["turns"]
            reference = cache.render(
                user_turn_request(speaker, turns[0]["user_text"], turns[0]["delivery_label"])
            )
            for turn in turns[1:]:
                wave = cache.render(
                    user_turn_request(speaker, turn["user_text"], turn["delivery_label"])
                ).waveform
                x = turn_features(probe.config.features, wave, reference.waveform)[None, :]
                heard = bool(probe.predict_features(x)[0] == RESOLVED)
                out[turn["reaction"]][(turn["delivery_label"] in RESOLVED_DELIVERY_LABELS, heard)] += 1
    return out


def main(features: str = "prosody_relative") -> dict:
    console = Console(width=160)
    cache = RenderCache(make_renderer("espeak"), max_bytes=512 * 2**20, disk_dir=render_store())
    probe, _ = trained_probe(cache, features)
    config = ProbeConfig(task="concern", features=features, assents_only=True)
    test = build_data(config, "test", cache, seed=config.seed + 3, assents=True)
    verdicts = probe.predict_features(test.x) == RESOLVED
    genuine = test.y == RESOLVED
    voices = np.array([voice_for(s) for s in test.item_ids])
    report = {
        "by delivery": heard_share(verdicts, test.deliveries),
        "recall by voice": heard_share(verdicts[genuine], voices[genuine]),
        "false resolved by voice": heard_share(verdicts[~genuine], voices[~genuine]),
        "false resolved by scenario": dispersion(verdicts[~genuine], test.item_ids[~genuine]),
        "recall by scenario": dispersion(~verdicts[genuine], test.item_ids[genuine]),
    }
    table = Table(
        "delivery", "heard genuine", "n", title="test shared assents: heard as genuine, by delivery"
    )
    for label, (share, n) in report["by delivery"].items():
        table.add_row(label, f"{share:.1%}", str(n))
    console.print(table)
    table = Table("voice", "recall", "false resolved", title="by voice")
    for voice in sorted(set(voices)):
        r, fr = report["recall by voice"][voice], report["false resolved by voice"][voice]
        table.add_row(voice, f"{r[0]:.1%} (n {r[1]})", f"{fr[0]:.1%} (n {fr[1]})")
    console.print(table)
    console.print({k: report[k] for k in ("false resolved by scenario", "recall by scenario")})
    turns = dialogue_turns(probe, cache, features)
    report["dialogue turns"] = {
        kind: {f"resolved={r} heard={h}": n for (r, h), n in counts.items()} for kind, counts in turns.items()
    }
    table = Table(
        "reaction", "genuine heard", "unresolved heard as genuine", title="turns of planner@T+S^ dialogues"
    )
    for kind, counts in sorted(turns.items()):
        pos, neg = (
            counts[(True, True)] + counts[(True, False)],
            counts[(False, True)] + counts[(False, False)],
        )
        table.add_row(
            kind,
            f"{counts[(True, True)]}/{pos}" if pos else "-",
            f"{counts[(False, True)]}/{neg}" if neg else "-",
        )
    console.print(table)
    (OUT / f"probe_errors_{features}.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--features", default="prosody_relative", help="the probe's features (better_ear.KINDS)"
    )
    main(parser.parse_args().features)
