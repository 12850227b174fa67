"""Onset (PACT-SLM) probes and matched controls on the held-out test domains.

Every learned model is the same balanced multinomial logistic regression (C=1, lbfgs, 2,000
iterations) fit on the same 2,080 clean training prefix records; nothing is chosen on test. The
test split (80 groups, 4 held-out domains) is scored on its clean and 15 dB noise renderings
(1,600 prefix records). Reports, with 1,000 contrast-group bootstrap resamples (seed 0):

* Table 1 counts (groups, trajectories, prefix records per split);
* per model: trajectory exactness, pre-onset exposed-action rate, pooled post-onset accuracy
  (exposed / internal label split), onset exactness, onset error; all, clean and noise15;
* paired differences audio probe minus each control (same draws);
* the 100-permutation within-prefix check of the audio probe (labels permuted within prefix
  position, seeds 0-99, refit each time), reported apart from the bootstrap;
* every single scalar (the five scalar acoustics and the 12 prosodic features) as its own probe,
  and each scalar of the last 300 ms (``agents.onset.tail_scalars``) as its own probe, with its
  interval and the audio probe's paired difference from it;
* every single-scalar control of ``agents.onset.scalar_controls`` (25 columns, each read
  linearly, piecewise-linearly and by a decision tree) against the audio probe (the reference
  listener) and against the earlier probe, linear on the 140-value representation
  (``linear_representation``): the listener's paired margin over each, the smallest first;
* the audio probe with its prior corrected (the balanced class weights undone at prediction);
* the two-stage scalar rule (duration and tail harmonicity time the onset, six F0
  scalars name the label), and onset timing from each tail scalar (``agents.onset.tail_scalars``)
  alone and next to duration, against duration alone.

Prefix records go straight from features to predictions; their trajectory records have the
env's ``info["episode"]`` format, so ``hear_gym.envs.onset.metrics`` scores both alike.
Writes benchmarks/out/onset_probes.{json,md} (another renderer than eSpeak:
onset_probes_RENDERER.{json,md}). Usage: python -m benchmarks.onset.probes [N_PERMUTATIONS]
[--renderer NAME] (the speech of every prefix, train and test; default espeak).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from agents.onset.baselines import plurality_action
from agents.onset.logistic import BalancedLogisticRegression
from agents.onset.probes import KINDS, Probe, prefix_rows, row_blocks, trajectory_records
from agents.onset.scalar_controls import control_predictions, leading_silence, listener_margins
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES, timing_predictions
from hear_gym.envs.onset.actions import WAIT
from hear_gym.envs.onset.family import VERSION
from hear_gym.envs.onset.features import SCALAR_NAMES
from hear_gym.envs.onset.groups.generator import select_groups
from hear_gym.envs.onset.groups.model import N_PREFIXES, SPLITS
from hear_gym.envs.onset.metrics import counts, metric_table, paired_difference
from hear_gym.speech.features import FEATURE_NAMES

OUT = Path(__file__).resolve().parents[1] / "out"
BLOCKS = ("representation", "tail", "scalar", "elapsed", "text")
MARGINS_SHOWN = 8  # smallest listener margins listed per listener
HEADLINE = ("post_onset_accuracy", "pre_onset_exposed", "trajectory_exactness", "onset_exactness")


def table1() -> list[dict]:
    rows = []
    for split in SPLITS:
        groups = select_groups(split)
        trajectories = 2 * len(groups)
        records = sum(2 * len(g.renderings) * N_PREFIXES for g in groups)
        rows.append(
            {
                "split": split,
                "domains": len({g.domain for g in groups}),
                "groups": len(groups),
                "trajectories": trajectories,
                "prefix_records": records,
                "renderings": sorted({r for g in groups for r in g.renderings}),
            }
        )
    return rows


def _duration(blocks: dict) -> np.ndarray:
    return blocks["elapsed"]


def two_stage_rule(train, blocks, tails) -> list[str]:
    """The two-stage scalar rule: Wait vs act from duration and tail harmonicity; the label from six
    F0 scalars (the prefix's five, the tail's mean), fit on the training rows at or after onset."""
    harmonicity = TAIL_SCALAR_NAMES.index("tail_harmonicity_db")
    timing_in = [
        np.column_stack([_duration(b), t[:, harmonicity]]) for b, t in zip(blocks, tails, strict=True)
    ]
    acts = timing_predictions(timing_in[0], [r.target for r in train], timing_in[1])
    f0 = [FEATURE_NAMES.index(n) for n in FEATURE_NAMES if n.startswith("f0_")]
    label_in = [
        np.column_stack([b["representation"][:, f0], t[:, TAIL_SCALAR_NAMES.index("tail_f0_mean_st")]])
        for b, t in zip(blocks, tails, strict=True)
    ]
    after = [i for i, r in enumerate(train) if r.target != WAIT]
    mean, std = label_in[0][after].mean(axis=0), label_in[0][after].std(axis=0)
    model = BalancedLogisticRegression().fit(
        (label_in[0][after] - mean) / std, [train[i].target for i in after]
    )
    labels = model.predict((label_in[1] - mean) / std)
    return [WAIT if a == WAIT else label for a, label in zip(acts, labels, strict=True)]


def tail_timing(train, test, blocks, tails) -> dict:
    """Onset exactness of Wait-vs-act controls on duration plus one tail scalar, and each one's
    paired difference from duration alone (the elapsed-time control)."""
    targets = [r.target for r in train]
    elapsed = trajectory_records(
        test, timing_predictions(_duration(blocks[0]), targets, _duration(blocks[1]))
    )
    out = {"elapsed": metric_table(elapsed)["all"]["onset_exactness"].as_dict()}
    for i, name in enumerate(TAIL_SCALAR_NAMES):
        alone = [t[:, [i]] for t in tails]
        with_duration = [np.column_stack([_duration(b), t[:, i]]) for b, t in zip(blocks, tails, strict=True)]
        for label, inputs in ((name, alone), (f"duration+{name}", with_duration)):
            records = trajectory_records(test, timing_predictions(inputs[0], targets, inputs[1]))
            out[label] = {
                **metric_table(records)["all"]["onset_exactness"].as_dict(),
                "minus_elapsed": paired_difference(records, elapsed, "onset_exactness").as_dict(),
            }
    return out


def post_onset(records: list[dict]) -> float:
    num, den = counts(records, "post_onset_accuracy")
    return num / den


def main(n_permutations: int = 100, renderer: str = "espeak") -> dict:
    start = time.perf_counter()
    train, test = prefix_rows("train", renderer=renderer), prefix_rows("test", renderer=renderer)
    train_blocks, test_blocks = row_blocks(train, BLOCKS), row_blocks(test, BLOCKS)
    print(
        f"features of {len(train)} train and {len(test)} test prefixes: {time.perf_counter() - start:.0f} s"
    )
    final = plurality_action()
    predictions = {
        "always_wait": [WAIT] * len(test),
        "endpoint_plurality": [final if r.k == N_PREFIXES - 1 else WAIT for r in test],
    }
    probes = {kind: Probe(kind).fit(train, train_blocks) for kind in KINDS}
    for kind, probe in probes.items():
        predictions[kind] = probe.predict(test_blocks)
    predictions["audio_prior_corrected"] = probes["audio"].predict(test_blocks, prior_corrected=True)
    linear = Probe("scalar").fit(train, {"scalar": train_blocks["representation"]})
    predictions["linear_representation"] = linear.predict({"scalar": test_blocks["representation"]})
    tails = [train_blocks["tail"], test_blocks["tail"]]
    predictions["two_stage_scalar"] = two_stage_rule(train, (train_blocks, test_blocks), tails)
    timing = tail_timing(train, test, (train_blocks, test_blocks), tails)
    records = {name: trajectory_records(test, p) for name, p in predictions.items()}
    models = {
        name: {s: {m: e.as_dict() for m, e in t.items()} for s, t in metric_table(r).items()}
        for name, r in records.items()
    }
    model_counts = {name: {m: counts(r, m) for m in HEADLINE} for name, r in records.items()}
    differences = {
        f"audio - {name}": {
            m: paired_difference(records["audio"], records[name], m).as_dict() for m in HEADLINE
        }
        for name in records
        if name != "audio"
    }
    observed = post_onset(records["audio"])
    t0 = time.perf_counter()
    permuted = []
    for seed in range(n_permutations):
        probe = Probe("audio").fit(train, train_blocks, label_seed=seed)
        permuted.append(post_onset(trajectory_records(test, probe.predict(test_blocks))))
    permutation = {
        "n": n_permutations,
        "observed": observed,
        "median": float(np.median(permuted)) if permuted else None,
        "p97_5": float(np.percentile(permuted, 97.5)) if permuted else None,
        "percentile_of_observed": float(100 * np.mean(np.array(permuted) < observed)) if permuted else None,
        "seconds": round(time.perf_counter() - t0, 1),
        "scores": permuted,
    }
    for rows, blocks in ((train, train_blocks), (test, test_blocks)):
        blocks["silence"] = np.array([[leading_silence(r.waveform())] for r in rows])
    controls = control_predictions(train, train_blocks, test_blocks)
    scalar_controls = {
        listener: {
            name: {"control": m["control"].as_dict(), "margin": m["margin"].as_dict()}
            for name, m in listener_margins(test, predictions[listener], controls).items()
        }
        for listener in ("audio", "linear_representation")
    }
    singles = {}
    for name in (*SCALAR_NAMES, *FEATURE_NAMES):
        kind = f"single:{name}"
        single_records = trajectory_records(test, Probe(kind).fit(train, train_blocks).predict(test_blocks))
        singles[name] = post_onset(single_records)
    tail_singles = {}
    for i, name in enumerate(TAIL_SCALAR_NAMES):
        probe = Probe("scalar").fit(train, {"scalar": tails[0][:, [i]]})
        tail_records = trajectory_records(test, probe.predict({"scalar": tails[1][:, [i]]}))
        tail_singles[name] = {
            **metric_table(tail_records)["all"]["post_onset_accuracy"].as_dict(),
            "audio_minus": paired_difference(records["audio"], tail_records, "post_onset_accuracy").as_dict(),
        }
    result = {
        "generator": VERSION,
        "renderer": renderer,
        "table1": table1(),
        "models": models,
        "counts": model_counts,
        "differences": differences,
        "permutation": permutation,
        "single_scalars_post_onset": singles,
        "tail_scalars_post_onset": tail_singles,
        "tail_timing": timing,
        "scalar_controls": scalar_controls,
        "seconds": round(time.perf_counter() - start, 1),
    }
    OUT.mkdir(exist_ok=True)
    name = "onset_probes" if renderer == "espeak" else f"onset_probes_{renderer}"
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    markdown = to_markdown(result)
    (OUT / f"{name}.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    return result


def _pct(e: dict, signed: bool = False) -> str:
    f = "+.1f" if signed else ".1f"
    return f"{100 * e['point']:{f}} [{100 * e['low']:{f}}, {100 * e['high']:{f}}]"


def to_markdown(result: dict) -> str:
    lines = [
        f"Renderer: {result['renderer']}.",
        "",
        "| split | domains | groups | trajectories | prefix records |",
        "|---|---|---|---|---|",
    ]
    for row in result["table1"]:
        lines.append(
            f"| {row['split']} | {row['domains']} | {row['groups']} | {row['trajectories']} | {row['prefix_records']} |"
        )
    lines += [
        "",
        "| model | post-onset acc. | pre-onset exposed | trajectory exact | onset exact | clean post-onset | noise15 post-onset |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, slices in result["models"].items():
        a = slices["all"]
        lines.append(
            f"| {name} | {_pct(a['post_onset_accuracy'])} | {_pct(a['pre_onset_exposed'])} | {_pct(a['trajectory_exactness'])} | "
            f"{_pct(a['onset_exactness'])} | {_pct(slices['clean']['post_onset_accuracy'])} | {_pct(slices['noise15']['post_onset_accuracy'])} |"
        )
    lines += [
        "",
        "| paired difference | post-onset acc. | pre-onset exposed | trajectory exact | onset exact |",
        "|---|---|---|---|---|",
    ]
    for name, d in result["differences"].items():
        lines.append(f"| {name} | " + " | ".join(_pct(d[m], signed=True) for m in HEADLINE) + " |")
    p = result["permutation"]
    if p["n"]:
        lines += [
            "",
            f"Permutation check ({p['n']} within-prefix label permutations, refit each): observed {100 * p['observed']:.2f}%, "
            f"median {100 * p['median']:.2f}%, 97.5th percentile {100 * p['p97_5']:.2f}%, observed at percentile {p['percentile_of_observed']:.0f}.",
        ]
    lines += [
        "",
        "| onset timing (Wait vs act) from | onset exact | minus elapsed |",
        "|---|---|---|",
        f"| elapsed (duration) | {_pct(result['tail_timing']['elapsed'])} | |",
    ]
    for name, e in result["tail_timing"].items():
        if name != "elapsed":
            lines.append(f"| {name} | {_pct(e)} | {_pct(e['minus_elapsed'], signed=True)} |")
    lines += [
        "",
        "| one scalar of the last 300 ms as the probe's input | post-onset acc. | audio probe minus it |",
        "|---|---|---|",
    ]
    for name, e in result["tail_scalars_post_onset"].items():
        lines.append(f"| {name} | {_pct(e)} | {_pct(e['audio_minus'], signed=True)} |")
    for listener, margins in result["scalar_controls"].items():
        ranked = sorted(margins.items(), key=lambda kv: kv[1]["margin"]["low"])
        lines += [
            "",
            f"{listener} against every single-scalar control ({len(ranked)}), smallest margins first:",
            "",
            "| control | post-onset acc. | listener minus it |",
            "|---|---|---|",
            *(
                f"| {name} | {_pct(m['control'])} | {_pct(m['margin'], signed=True)} |"
                for name, m in ranked[:MARGINS_SHOWN]
            ),
        ]
    best = max(result["single_scalars_post_onset"].items(), key=lambda kv: kv[1])
    lines += [
        "",
        f"Best single scalar (of {len(result['single_scalars_post_onset'])}): {best[0]} at {100 * best[1]:.1f}% post-onset accuracy.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_permutations", nargs="?", type=int, default=100)
    parser.add_argument("--renderer", default="espeak", help="speech of the prefixes (default espeak)")
    arguments = parser.parse_args()
    main(arguments.n_permutations, arguments.renderer)
