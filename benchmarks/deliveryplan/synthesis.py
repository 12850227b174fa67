"""DeliveryPlan through synthesis: does a rendered plan move the audio the way its fields say,
and do the speech layer's own delivery-label plans change only the fields an edit links?

Run: ``python -m benchmarks.deliveryplan.synthesis [--out benchmarks/out/deliveryplan_synthesis.json]``.
Prints two tables:

1. field x renderer agreement: every distinct expected plan of the suite (``PLAN_TABLE``) is
   rendered by two held-out voices (m4, f4) saying both statements, and so is each of its
   one-field edits (every other level of every field); an edit agrees when the field's cue
   (``synthesis_loop.CUES``) moves the way the levels' order says. Agreement with a 95%
   bootstrap CI over the base renderings; the median cue change in the planned direction
   (positive = moved as planned). ``emphasis`` is not rendered (unsupported).
2. the label-table audit (``label_table_audit_audio``): for the ``paper`` and ``clear`` delivery
   plan tables, every ordered pair of distinct labels x the ten voices; required-change accuracy,
   preservation, unexpected-change rate and counterfactual consistency of the varied plans
   against the table's linked fields (bootstrap over label pairs), and how often each unlinked
   field changed level.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from hear_gym.envs.deliveryplan.cases import UTTERANCES
from hear_gym.envs.deliveryplan.label_table_audit_audio import audit_edits
from hear_gym.envs.deliveryplan.plan import PLAN_FIELDS
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.synthesis_loop import CUES, UNSUPPORTED, edit_outcomes
from hear_gym.envs.deliveryplan.verifier import PAIR_METRICS
from hear_gym.speech.espeak import VOICES
from hear_gym.stats.bootstrap import bootstrap

RENDERERS = ("espeak", "praat")
SYNTHESIS_VOICES = ("m4", "f4")
TABLES = ("paper", "clear")


def _grouped_mean(values_by_group: list[list[float]]) -> dict:
    sums = np.array([sum(v) for v in values_by_group], dtype=np.float64)
    sizes = np.array([len(v) for v in values_by_group], dtype=np.float64)
    return bootstrap(lambda idx: sums[idx].sum(-1) / sizes[idx].sum(-1), len(sums)).as_dict()


def synthesis_agreement() -> dict:
    plans = sorted(set(PLAN_TABLE.values()), key=lambda p: json.dumps(p.as_dict(), sort_keys=True))
    results = {}
    for renderer in RENDERERS:
        bases = [
            edit_outcomes(plan, text, voice, renderer)
            for plan in plans
            for voice in SYNTHESIS_VOICES
            for text in UTTERANCES
        ]
        results[renderer] = {}
        for field in PLAN_FIELDS:
            by_base = [[float(o.agrees) for o in base if o.field == field] for base in bases]
            moved = [o.measured * o.planned for base in bases for o in base if o.field == field]
            results[renderer][field] = {
                **_grouped_mean(by_base),
                "n_edits": int(sum(len(b) for b in by_base)),
                "median_planned_change": float(np.median(moved)),
                "cue": CUES[field].name,
            }
    return {"n_plans": len(plans), "by_renderer": results}


def label_table_audit() -> dict:
    results = {}
    for prosody in TABLES:
        audits = audit_edits(prosody, VOICES)
        linked = [a for a in audits if a.linked]
        pairs = sorted({(a.before, a.after) for a in linked})
        by_pair = {p: [a for a in linked if (a.before, a.after) == p] for p in pairs}
        row = {m: _grouped_mean([[a.scores[m] for a in by_pair[p]] for p in pairs]) for m in PAIR_METRICS}
        row["unexpected_by_field"] = {
            f: float(np.mean([f in a.unexpected for a in linked if f not in a.linked])) for f in PLAN_FIELDS
        }
        row["n_edits"], row["n_unlinked_pairs"] = (
            len(audits),
            len({(a.before, a.after) for a in audits if not a.linked}),
        )
        results[prosody] = row
    return results


def _ci(e: dict) -> str:
    return f"{e['point']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def tables(results: dict) -> list[Table]:
    synthesis = results["synthesis"]
    agreement = Table(
        "field",
        "cue",
        *RENDERERS,
        title=f"Field x renderer agreement ({synthesis['n_plans']} plans x 2 voices x 2 statements)",
    )
    for field in PLAN_FIELDS:
        cells = []
        for renderer in RENDERERS:
            row = synthesis["by_renderer"][renderer][field]
            cells.append(f"{_ci(row)} (n={row['n_edits']}, median {row['median_planned_change']:+.2f})")
        agreement.add_row(field, CUES[field].name, *cells)
    for field in UNSUPPORTED:
        agreement.add_row(field, "-", *("unsupported" for _ in RENDERERS))
    audit = Table(
        "table", *PAIR_METRICS, "unlinked field changed (share)", title="Label-table audit: one-label edits"
    )
    for prosody, row in results["audit"].items():
        unexpected = ", ".join(f"{f} {v:.2f}" for f, v in row["unexpected_by_field"].items() if v > 0)
        audit.add_row(prosody, *(_ci(row[m]) for m in PAIR_METRICS), unexpected)
    return [agreement, audit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    results = {"audit": label_table_audit(), "synthesis": synthesis_agreement()}
    console = Console(width=250)
    for table in tables(results):
        console.print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
