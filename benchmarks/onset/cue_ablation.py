"""Which cues the Onset audio probe reads, and whether one scalar reads as much: a deliveries audit.

Fits the paper's classifier (``agents.onset.probes``: balanced logistic regression, same 2,080
clean training records) on: the reference listener (``Probe("audio")``: the 12 prosodic features
and the 8 scalars of the last 300 ms, read piecewise-linearly, ``agents.onset.piecewise``), each
of its two parts alone, the listener with the 128 log-mel values added (linear), the earlier
probe (linear on the whole 140-value representation) and its two parts; then every one of the
12 prosodic features and every scalar of the last 300 ms (``agents.onset.tail_scalars``) as its
own input, read linearly, piecewise-linearly and by a decision tree
(``agents.onset.scalar_controls``). Prints each one's pooled post-onset accuracy on the test
split (points only; ``benchmarks/onset/probes.py`` gives intervals).

With a path, the groups are generated from that deliveries file instead of
``hear_gym/envs/onset/groups/data/deliveries.json`` (same draws, other deliveries), so a
candidate can be audited before it replaces the data, and an older one re-measured:

    python -m benchmarks.onset.cue_ablation [DELIVERIES_JSON]
    git show 2550e95:hear_gym/envs/onset/groups/data/deliveries.json > old.json
    python -m benchmarks.onset.cue_ablation old.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from agents.onset.piecewise import PiecewiseReading
from agents.onset.probes import PrefixRow, Probe, prefix_rows
from agents.onset.scalar_controls import READINGS, control_blocks, control_predictions
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES
from hear_gym.envs.onset.actions import WAIT
from hear_gym.envs.onset.groups import generator
from hear_gym.speech.features import FEATURE_NAMES, N_FEATURES


def use_deliveries(path: Path) -> None:
    """Generate groups from ``path`` in this process (before any group is built)."""
    candidate = json.loads(path.read_text(encoding="utf-8"))
    generator.deliveries = lambda: candidate
    generator.all_groups.cache_clear()
    generator.groups_by_id.cache_clear()


def post_onset(rows: list[PrefixRow], predictions: list[str]) -> float:
    after = [(r.target, p) for r, p in zip(rows, predictions, strict=True) if r.target != WAIT]
    return sum(t == p for t, p in after) / len(after)


def main(deliveries: Path | None = None) -> dict[str, float]:
    if deliveries is not None:
        use_deliveries(deliveries)
    start = time.perf_counter()
    train, test = prefix_rows("train"), prefix_rows("test")
    both = [control_blocks(rows) for rows in (train, test)]
    blocks = [b["representation"] for b in both]
    tails = [b["tail"] for b in both]

    def scored(columns: list[np.ndarray], piecewise: bool = False) -> float:
        if piecewise:
            reading = PiecewiseReading().fit(columns[0])
            columns = [reading.transform(c) for c in columns]
        probe = Probe("scalar").fit(train, {"scalar": columns[0]})
        return post_onset(test, probe.predict({"scalar": columns[1]}))

    prosody = [b[:, :N_FEATURES] for b in blocks]
    listener = [np.hstack([p, t]) for p, t in zip(prosody, tails, strict=True)]
    out = {
        "the reference listener (12 prosodic + 8 tail, piecewise)": post_onset(
            test, Probe("audio").fit(train, both[0]).predict(both[1])
        ),
        "12 prosodic features, piecewise": scored(prosody, piecewise=True),
        "8 tail scalars, piecewise": scored(tails, piecewise=True),
        "the listener + 128 log-mel values (linear)": scored(
            [
                np.hstack([PiecewiseReading().fit(listener[0]).transform(x), b[:, N_FEATURES:]])
                for x, b in zip(listener, blocks, strict=True)
            ]
        ),
        "earlier probe: linear on the 140 values": scored(blocks),
        "12 prosodic features, linear": scored(prosody),
        "128 log-mel values, linear": scored([b[:, N_FEATURES:] for b in blocks]),
    }
    singles = control_predictions(train, both[0], both[1])
    for reading in READINGS:
        out |= {
            f"{reading}: {'prefix ' if n in FEATURE_NAMES else ''}{n}": post_onset(
                test, singles[f"{reading}:{n}"]
            )
            for n in (*FEATURE_NAMES, *TAIL_SCALAR_NAMES)
        }
    for name, score in out.items():
        print(f"| {name} | {100 * score:.1f} |")
    print(f"{time.perf_counter() - start:.0f} s")
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
