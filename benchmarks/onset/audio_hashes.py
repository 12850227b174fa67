"""Fingerprints of every Onset contrast group's audio under one renderer, to compare two trees.

For each group of every split: the SHA-256 of each waveform's float32 bytes (both branches, each
rendering), the manifest's PCM16 SHA-256, the splice and the length. Run it in two trees (e.g.
before and after a change) and compare the two files: identical files mean byte-identical audio.

Usage: python -m benchmarks.onset.audio_hashes [--out FILE.json] [--renderer NAME]
(default: benchmarks/out/onset_audio_hashes_<renderer>.json)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from hear_gym.envs.onset.groups.generator import select_groups
from hear_gym.envs.onset.groups.model import SPLITS
from hear_gym.envs.onset.scenes import build_group

OUT = Path(__file__).resolve().parents[1] / "out"


def fingerprints(renderer: str) -> dict[str, dict]:
    out = {}
    for split in SPLITS:
        for group in select_groups(split):
            rendered = build_group(group, renderer)
            out[group.group_id] = {
                "float32_sha256": {
                    f"{branch}/{rendering}": hashlib.sha256(wave.tobytes()).hexdigest()
                    for (branch, rendering), wave in sorted(rendered.waveforms.items())
                },
                "pcm16_sha256": rendered.manifest["pcm16_sha256"],
                "divergence": rendered.divergence,
                "samples": rendered.manifest["samples"],
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="default: benchmarks/out/onset_audio_hashes_<renderer>.json")
    parser.add_argument("--renderer", default="espeak")
    arguments = parser.parse_args()
    out = arguments.out or OUT / f"onset_audio_hashes_{arguments.renderer}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = fingerprints(arguments.renderer)
    out.write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(result)} groups ({arguments.renderer}) in {time.perf_counter() - start:.0f} s -> {out}")


if __name__ == "__main__":
    main()
