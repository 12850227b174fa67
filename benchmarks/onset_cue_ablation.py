"""Which cues the Onset audio probe reads, and whether one scalar reads as much: a deliveries audit.

Fits the paper's probe (``agents.onset.probes``: balanced logistic regression, same 2,080 clean
training records) on the whole representation, on its 12 prosodic features alone and on its 128
log-mel values alone, then every one of those 12 prosodic features and every scalar of the last
300 ms (``agents.onset.tail_scalars``) as its own probe, and prints each one's pooled post-onset
accuracy on the test split (points only; ``benchmarks/onset_probes.py`` gives intervals).

With a path, the groups are generated from that deliveries file instead of
``hear_gym/envs/onset/groups/data/deliveries.json`` (same draws, other deliveries), so a
candidate can be audited before it replaces the data, and an older one re-measured:

    python benchmarks/onset_cue_ablation.py [DELIVERIES_JSON]
    git show 2550e95:hear_gym/envs/onset/groups/data/deliveries.json > old.json
    python benchmarks/onset_cue_ablation.py old.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from agents.onset.probes import PrefixRow, Probe, prefix_rows, row_blocks
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES, tail_scalars
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
    blocks = [row_blocks(rows, ("representation",))["representation"] for rows in (train, test)]
    tails = [np.stack([tail_scalars(r.waveform()) for r in rows]) for rows in (train, test)]

    def scored(columns: list[np.ndarray]) -> float:
        probe = Probe("scalar").fit(train, {"scalar": columns[0]})
        return post_onset(test, probe.predict({"scalar": columns[1]}))

    out = {
        "audio probe (140 values)": scored(blocks),
        "12 prosodic features": scored([b[:, :N_FEATURES] for b in blocks]),
        "128 log-mel values": scored([b[:, N_FEATURES:] for b in blocks]),
    }
    out |= {f"prefix {n}": scored([b[:, [i]] for b in blocks]) for i, n in enumerate(FEATURE_NAMES)}
    out |= {n: scored([t[:, [i]] for t in tails]) for i, n in enumerate(TAIL_SCALAR_NAMES)}
    for name, score in out.items():
        print(f"| {name} | {100 * score:.1f} |")
    print(f"{time.perf_counter() - start:.0f} s")
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
