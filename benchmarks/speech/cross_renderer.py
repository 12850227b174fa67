"""Cross-renderer generalization: does a probe trained on one renderer's speech hear another's?

For each probe of ``benchmarks.speech.cross_renderer_probes.FAMILIES`` (the Hear2Act concern probe,
the VoiceGate audio gate, the Onset audio probe) and every renderer of the registry
(``hear_gym.speech.renderers.RENDERERS``, so a renderer added there joins the table):

1. train the probe on the training split rendered by renderer A, once per renderer;
2. featurize the held-out test split rendered by renderer B, once per renderer (featurized
   splits are kept under benchmarks/out/cross_renderer/, keyed by probe, split, renderer and its
   version, the family's generator version and its size, so adding a renderer renders only its
   own speech; delete the folder after changing a probe's features);
3. score every trained probe on every renderer's held-out rows: a train x test table, the
   diagonal being the within-renderer held-out figure;
4. the transfer cost of each off-diagonal cell: (trained on A, tested on B) minus (trained on B,
   tested on B), paired on the same held-out rows.

Intervals: 95% percentile bootstrap (``hear_gym.stats.bootstrap``, 2,000 resamples, seed 0)
over each probe's groups (Hear2Act test scenarios, VoiceGate item groups, Onset contrast
groups); the transfer costs reuse the same draws for both terms. A renderer that cannot speak
here (``neural`` without its optional extra) is left out, with the reason. Writes
benchmarks/out/cross_renderer.{json,md} (``--probes`` naming some probes:
``cross_renderer_<probes>.{json,md}``); runs of different probes can go in parallel and a
full run afterwards reuses their kept splits.

    python -m benchmarks.speech.cross_renderer                                   # every probe and renderer
    python -m benchmarks.speech.cross_renderer --renderers espeak praat --probes hear2act_concern voicegate_gate
    python -m benchmarks.speech.cross_renderer --hear2act-scenarios 40 --voicegate-per-family 120 --onset-groups 24
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from rich.console import Console

from benchmarks.speech.cross_renderer_probes import FAMILIES, ProbeFamily, Sizes, Terms
from hear_gym.speech.renderers import RENDERERS, make_renderer
from hear_gym.stats.bootstrap import Estimate, contrast_ci

OUT = Path(__file__).resolve().parents[1] / "out"
ROW_CACHE = OUT / "cross_renderer"


@dataclass
class CrossTable:
    """One probe's train x test table (keys: (trained on, tested on))."""

    probe: str
    metric: str
    group_unit: str
    renderers: tuple[str, ...]  # the ones that could speak, in the order asked
    skipped: dict[str, str] = field(default_factory=dict)  # renderer -> why
    cells: dict[tuple[str, str], Estimate] = field(default_factory=dict)
    transfer: dict[tuple[str, str], Estimate] = field(default_factory=dict)  # off-diagonal only
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "probe": self.probe,
            "metric": self.metric,
            "group_unit": self.group_unit,
            "renderers": list(self.renderers),
            "skipped": self.skipped,
            "cells": {f"{a}->{b}": e.as_dict() for (a, b), e in self.cells.items()},
            "transfer_minus_within": {f"{a}->{b}": e.as_dict() for (a, b), e in self.transfer.items()},
            "seconds": round(self.seconds, 1),
        }


def cached_rows(family: ProbeFamily, split: str, renderer: str, folder: Path | None) -> object:
    """``family.rows(split, renderer)``, kept in ``folder`` (``None``: not kept)."""
    if folder is None:
        return family.rows(split, renderer)
    version = make_renderer(renderer).version
    digest = hashlib.blake2b(family.version.encode(), digest_size=6).hexdigest()
    path = folder / f"{family.name}-{split}-{renderer}-v{version}-{digest}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    rows = family.rows(split, renderer)
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_bytes(pickle.dumps(rows))
    partial.replace(path)
    return rows


def unavailable(renderer: str) -> str | None:
    """Why ``renderer`` cannot speak here (its optional extra is missing); ``None``: it can."""
    try:
        make_renderer(renderer)
    except ImportError as missing:
        return str(missing)
    return None


def cross_table(
    family: ProbeFamily,
    renderers: tuple[str, ...],
    console: Console | None = None,
    row_cache: Path | None = None,
) -> CrossTable:
    """``family``'s table over ``renderers`` (steps 1-4 of the module docstring); featurized
    splits kept in ``row_cache``. With fewer than two renderers
    that can speak there are no cells: nothing to transfer."""
    console = console or Console(quiet=True)
    start = time.perf_counter()
    skipped = {r: reason for r in renderers if (reason := unavailable(r)) is not None}
    usable = tuple(r for r in renderers if r not in skipped)
    table = CrossTable(family.name, family.metric, family.group_unit, usable, skipped)
    for renderer, reason in skipped.items():
        console.print(f"[yellow]{family.name}: skipping {renderer}: {reason}")
    if len(usable) < 2:
        console.print(f"[yellow]{family.name}: fewer than two renderers can speak; no table")
        table.renderers = ()
        return table
    models, held_out = {}, {}
    for renderer in usable:
        console.log(f"{family.name}: training on {renderer}")
        train_rows = cached_rows(family, "train", renderer, row_cache)
        models[renderer] = family.fit(renderer, train_rows)
        console.log(f"{family.name}: held-out rows of {renderer}")
        held_out[renderer] = cached_rows(family, "test", renderer, row_cache)
    terms: dict[tuple[str, str], Terms] = {
        (a, b): family.score(models[a], held_out[b]) for a in usable for b in usable
    }
    for (a, b), cell in terms.items():
        table.cells[a, b] = contrast_ci(cell)
        if a != b:
            table.transfer[a, b] = contrast_ci(cell + [(-w, sums) for w, sums in terms[b, b]])
    table.seconds = time.perf_counter() - start
    return table


def to_markdown(table: CrossTable) -> str:
    lines = [
        f"**{table.probe}**: {table.metric}; 95% CIs over {table.group_unit} ({table.seconds:.0f} s)",
        "",
    ]
    if table.skipped:
        lines += [*(f"- skipped {r}: {reason}" for r, reason in table.skipped.items()), ""]
    if not table.cells:
        return "\n".join([*lines, "No table: fewer than two renderers can speak.", ""])
    header = "| trained on \\ tested on | " + " | ".join(table.renderers) + " |"
    rule = "|---|" + "---|" * len(table.renderers)
    lines += [header, rule]
    for a in table.renderers:
        lines.append(f"| {a} | " + " | ".join(table.cells[a, b].percent() for b in table.renderers) + " |")
    lines += ["", "Transfer cost: (trained on A, tested on B) minus (trained on B, tested on B), paired.", ""]
    lines += [header, rule]
    for a in table.renderers:
        shown = ("" if a == b else table.transfer[a, b].percent(signed=True) for b in table.renderers)
        lines.append(f"| {a} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def main(probes: tuple[str, ...], renderers: tuple[str, ...], sizes: Sizes = Sizes()) -> list[CrossTable]:
    console = Console(width=160)
    tables = []
    for name in probes:
        console.rule(name)
        table = cross_table(FAMILIES[name](sizes), renderers, console, ROW_CACHE)
        console.print(to_markdown(table))
        tables.append(table)
        write(tables, sizes, "" if set(probes) == set(FAMILIES) else "_" + "_".join(probes))
    return tables


def write(tables: list[CrossTable], sizes: Sizes, suffix: str) -> None:
    """The tables so far (after every probe: a long run keeps what it finished); a run of some
    probes (``suffix``) beside the full one."""
    OUT.mkdir(exist_ok=True)
    text = "\n".join(to_markdown(t) for t in tables)
    (OUT / f"cross_renderer{suffix}.md").write_text(text, encoding="utf-8")
    record = {"sizes": asdict(sizes), "tables": [t.as_dict() for t in tables]}
    (OUT / f"cross_renderer{suffix}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", nargs="+", choices=list(FAMILIES), default=list(FAMILIES))
    parser.add_argument("--renderers", nargs="+", choices=list(RENDERERS), default=list(RENDERERS))
    for size in fields(Sizes):
        flag = "--" + size.name.replace("_", "-")
        parser.add_argument(flag, type=int, default=size.default, help=f"default: {size.default or 'all'}")
    args = parser.parse_args()
    main(
        tuple(args.probes),
        tuple(args.renderers),
        Sizes(**{f.name: getattr(args, f.name) for f in fields(Sizes)}),
    )
