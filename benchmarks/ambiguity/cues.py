"""Are the Ambiguity minimal pairs audibly different? The acoustic cue per contrast class x renderer.

Every audio-decided minimal pair of the suite (pause, stress, intonation, Mandarin tone and
heteronym; all splits) is rendered in both readings by each renderer and voice, and measured with
Praat (``hear_gym.envs.ambiguity.cues``) at the token times the renderer reports:

* pause: silence at the boundary, paused minus unpaused reading (s);
* stress: the token's mean F0 (st), log voiced-duration ratio and energy (dB), stressed minus unstressed;
* intonation: final F0 slope over the last voiced 0.4 s (st/s), rising minus falling reading;
* tone: the shape each forced syllable's F0 contour shows (high level, rising, low/dipping,
  falling) against the tone the reading forces.

Per cue: pairs x voices measured (n), the mean with a 95% bootstrap CI over pairs (voices
averaged within a pair), the paired effect size d_z = mean / sd, and the share in the expected
direction. A reference row measures what eSpeak NG does alone (no Praat: forced pinyin tones,
"?" vs "." endings), the reason the renderers draw tones and reinforce the final contour.

With ``--part classifier``: the prosodic-feature classifier
(``agents.ambiguity.prosodic_classifier``) trained on the train split's pairs and scored on held-out
items, accuracy per contrast class with 95% item-bootstrap CIs, per renderer.

With ``--part shortcuts``: the single-scalar shortcut audit (``agents.ambiguity.acoustic_shortcuts``):
every utterance scalar's held-out balanced accuracy per contrast class, against its bound.

With ``--part stress``: which word was stressed, over every English stress pair of the frames
(``agents.ambiguity.stress_shortcuts``): every scalar's and the classifier's held-out accuracy
(grouped 5-fold), per renderer.

With ``--part detection``: clip length and token count against detection item vs control
(``agents.ambiguity.detection_length``; the first voice), per renderer.

    python -m benchmarks.ambiguity.cues [--voices m1 f2 m3 f4] [--part cues|classifier|shortcuts|stress|detection]

Prints the tables and writes benchmarks/out/ambiguity_{part}.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import date
from pathlib import Path

import numpy as np

from hear_gym.envs.ambiguity import cues
from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair
from hear_gym.envs.ambiguity.render import ESPEAK_LANGUAGE, NEUTRAL_SETTINGS, script, token_starts
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech import espeak

OUT = Path(__file__).resolve().parents[1] / "out"
RENDERERS = ("espeak", "praat")
DEFAULT_VOICES = ("m1", "f2", "m3", "f4")


def suite_pairs() -> list[tuple[str, tuple[SpokenReading, SpokenReading]]]:
    return [
        (item.item_id, tuple(u.spoken for u in item.readings))
        for item in all_items()
        if isinstance(item, PhonologicalPair) and item.contrast in AUDIO_DECIDED
    ]


def bootstrap_ci(values: np.ndarray, seed: int = 0, draws: int = 2000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(draws, len(values)), replace=True).mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def summarize(per_pair: dict[str, list[float]]) -> dict:
    """Cue values per pair (one per voice) -> n, mean, CI over pairs, d_z, share right."""
    pair_means = np.array([np.mean(v) for v in per_pair.values()])
    every = np.concatenate([np.asarray(v, dtype=float) for v in per_pair.values()])
    sd = float(every.std(ddof=1)) if len(every) > 1 else float("nan")
    low, high = bootstrap_ci(pair_means)
    return {
        "n": int(len(every)),
        "pairs": int(len(pair_means)),
        "mean": float(every.mean()),
        "ci95": [low, high],
        "d_z": float(every.mean() / sd) if sd > 0 else float("inf"),
        "share_right_direction": float(np.mean(every > 0)),
    }


def espeak_alone(reading: SpokenReading, voice: str) -> tuple[cues.Track, tuple[tuple[float, float], ...]]:
    """eSpeak NG's own rendering (the same text the ``espeak`` renderer gives it, no Praat) and
    its token times from eSpeak's word events."""
    plan = script(reading, native_phrasing=True)
    samples, words = espeak.synthesize_words(
        plan.text, voice, ESPEAK_LANGUAGE[reading.language], NEUTRAL_SETTINGS
    )
    starts = token_starts(plan.spans, words, len(samples))
    bounds = [*starts[1:], len(samples)]
    rate = espeak.ESPEAK_RATE
    spans = tuple((a / rate, b / rate) for a, b in zip(starts, bounds, strict=True))
    return cues.track(samples.astype(np.float64) / 32768, rate), spans


def measure(voices: tuple[str, ...]) -> dict:
    pairs = suite_pairs()
    cue_values: dict[tuple[str, str], dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    tones: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for renderer in RENDERERS:
        for voice in voices:
            for item_id, pair in pairs:
                measured = cues.measure_pair(pair, voice, renderer)
                tones[renderer] += measured.tones
                for cue in measured.cues:
                    cue_values[renderer][f"{cue.contrast}/{cue.cue}"].setdefault(item_id, []).append(
                        cue.value
                    )
    for voice in voices:  # eSpeak alone: tones and the final contour
        for item_id, pair in pairs:
            measured = [espeak_alone(r, voice) for r in pair]
            for reading, (t, spans) in zip(pair, measured, strict=True):
                tones["espeak alone"] += cues.tone_matches(reading, t, spans)
            tracks = tuple(t for t, _ in measured)
            for cue in cues.pair_cues(pair, tracks, tuple(s for _, s in measured)):
                if cue.contrast == "intonation":
                    cue_values["espeak alone"][f"{cue.contrast}/{cue.cue}"].setdefault(item_id, []).append(
                        cue.value
                    )
    return {
        "date": date.today().isoformat(),
        "voices": list(voices),
        "pairs": len(pairs),
        "cues": {r: {name: summarize(v) for name, v in sorted(by.items())} for r, by in cue_values.items()},
        "tones": {r: tone_summary(m) for r, m in tones.items()},
    }


def tone_summary(matches: list[tuple[int, int | None]]) -> dict:
    hits = np.array([forced == shape for forced, shape in matches], dtype=float)
    low, high = bootstrap_ci(hits)
    per_tone = {
        str(t): float(np.mean([shape == t for forced, shape in matches if forced == t]))
        for t in sorted(cues.TONE_SHAPES)
        if any(forced == t for forced, _ in matches)
    }
    return {"n": len(matches), "match": float(hits.mean()), "ci95": [low, high], "match_per_tone": per_tone}


def markdown(result: dict) -> str:
    lines = [
        f"Suite pairs: {result['pairs']} (audio-decided, all splits); voices {', '.join(result['voices'])}.",
        "",
        "| renderer | cue | n | mean [95% CI] | d_z | right direction |",
        "|---|---|---:|---|---:|---:|",
    ]
    for renderer, by_cue in result["cues"].items():
        for name, s in by_cue.items():
            lines.append(
                f"| {renderer} | {name} | {s['n']} | {s['mean']:.3g} [{s['ci95'][0]:.3g}, {s['ci95'][1]:.3g}] "
                f"| {s['d_z']:.2f} | {s['share_right_direction']:.2f} |"
            )
    lines += ["", "| renderer | forced syllables | tone shape matches [95% CI] | per tone 1 / 2 / 3 / 4 |"]
    lines.append("|---|---:|---|---|")
    for renderer, s in result["tones"].items():
        per = " / ".join(f"{s['match_per_tone'].get(str(t), float('nan')):.2f}" for t in (1, 2, 3, 4))
        lines.append(
            f"| {renderer} | {s['n']} | {s['match']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] | {per} |"
        )
    return "\n".join(lines)


def classifier_markdown(results: list[dict]) -> str:
    lines = [
        "| renderer | voices | contrast | held-out clips (pairs) | accuracy [95% item CI] |",
        "|---|---|---|---:|---|",
    ]
    for result in results:
        for contrast, s in result["accuracy"].items():
            lines.append(
                f"| {result['renderer']} | {', '.join(result['voices'])} | {contrast} | {s['n']} ({s['items']}) "
                f"| {s['accuracy']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] |"
            )
    weights = "; ".join(f"{r['renderer']}: {r['weights']}" for r in results)
    return "\n".join([*lines, "", f"Weights: {weights}"])


def shortcuts_markdown(by_renderer: dict) -> str:
    lines = [
        "| renderer | contrast | held-out pairs | bound | forbidden scalars (balanced accuracy) | best scalar |",
        "|---|---|---:|---:|---|---|",
    ]
    for renderer, report in by_renderer.items():
        for contrast, r in report.items():
            accuracy = r["balanced_accuracy"]
            forbidden = ", ".join(f"{n} {accuracy[n]:.2f}" for n in r["forbidden"])
            best = max(accuracy, key=accuracy.get)
            lines.append(
                f"| {renderer} | {contrast} | {r['held_out_pairs']} | {r['bound']:.2f} | {forbidden} "
                f"| {best} {accuracy[best]:.2f} |"
            )
    return "\n".join(lines)


def stress_markdown(results: list[dict]) -> str:
    from agents.ambiguity.stress_shortcuts import POSITION_BLIND

    lines = [
        "| renderer | voices | pairs | classifier | best position-blind scalar | best scalar |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in results:
        accuracy = r["balanced_accuracy"]
        blind = max(POSITION_BLIND, key=accuracy.get)
        best = max(accuracy, key=accuracy.get)
        lines.append(
            f"| {r['renderer']} | {', '.join(r['voices'])} | {r['pairs']} | {r['classifier']:.3f} "
            f"| {blind} {accuracy[blind]:.3f} | {best} {accuracy[best]:.3f} |"
        )
    return "\n".join(lines)


def detection_markdown(by_measure: dict) -> str:
    lines = [
        "| measure | cell | pairs (held out) | threshold rule | paired rule |",
        "|---|---|---:|---:|---:|",
    ]
    for measure, report in by_measure.items():
        for cell, r in report.items():
            lines.append(
                f"| {measure} | {cell} | {r['pairs']} ({r['held_out_pairs']}) | {r['threshold']:.3f} | {r['paired']:.3f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--voices", nargs="+", default=list(DEFAULT_VOICES))
    parser.add_argument(
        "--part", choices=("cues", "classifier", "shortcuts", "stress", "detection"), default="cues"
    )
    args = parser.parse_args()
    started = time.time()
    OUT.mkdir(exist_ok=True)
    if args.part == "cues":
        result = measure(tuple(args.voices))
        table = markdown(result)
    elif args.part == "shortcuts":  # single-scalar rules per contrast class, per renderer
        from agents.ambiguity.acoustic_shortcuts import audit, clips

        result = {"shortcuts": {r: audit(clips(tuple(args.voices), r)) for r in RENDERERS}}
        table = shortcuts_markdown(result["shortcuts"])
    elif args.part == "stress":
        from agents.ambiguity.stress_shortcuts import audit as stress_audit

        result = {"stress": [stress_audit(tuple(args.voices), r) for r in RENDERERS]}
        table = stress_markdown(result["stress"])
    elif args.part == "detection":
        from agents.ambiguity.detection_length import audit as length_audit
        from agents.ambiguity.detection_length import clip_seconds, token_count

        measures = {"tokens": token_count} | {
            f"clip s ({r}, {args.voices[0]})": clip_seconds(args.voices[0], r) for r in RENDERERS
        }
        result = {"detection": {name: length_audit(m) for name, m in measures.items()}}
        table = detection_markdown(result["detection"])
    else:  # the prosodic classifier: train split -> dev + test items, per renderer
        from agents.ambiguity.prosodic_classifier import evaluate

        result = {"classifier": [evaluate(tuple(args.voices), renderer) for renderer in RENDERERS]}
        table = classifier_markdown(result["classifier"])
    result["seconds"] = round(time.time() - started, 1)
    (OUT / f"ambiguity_{args.part}.json").write_text(json.dumps(result, indent=2))
    (OUT / f"ambiguity_{args.part}.md").write_text(table + "\n")
    print(table)
    print(f"\n{result['seconds']} s")


if __name__ == "__main__":
    main()
