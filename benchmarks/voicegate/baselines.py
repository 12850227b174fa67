"""VoiceGate baselines on the held-out split and the cue-validity set.

1. Builds the full item set (audio included) with 2 workers and reports the time (target <= 2 min).
2. Trains the audio gate on the train split (speaker-switch pairs and side-talk) and, as the
   paper's Appendix H control, a cue-balanced gate (field x gap crossed within both labels,
   labelled by source); reports held-out accuracy.
3. Evaluates always-mute (A+T), text-only (T) and both audio gates (A+T) on the held-out
   speaker-switch, side-talk and self-talk items and on the cue-validity set.

Writes benchmarks/out/voicegate/<agent>/ run folders, the gate checkpoint, build output and
benchmarks/out/voicegate.md (the tables for its page, benchmarks/voicegate/baselines.md); prints everything.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from agents.voicegate.audio_gate import AudioGateAgent, GateConfig, train_gate
from agents.voicegate.baselines import AlwaysMuteAgent, TextOnlyGateAgent
from hear_gym.envs.voicegate.build import build_items
from hear_gym.envs.voicegate.cli import print_report
from hear_gym.envs.voicegate.family import item_ids, run_config
from hear_gym.eval.pipeline import evaluate

OUT = Path(__file__).resolve().parents[1] / "out" / "voicegate"
FAMILIES = ("speaker_switch", "side_talk", "self_talk", "cue_validity")


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    build = build_items(OUT / "build", workers=2)
    print(f"build: {json.dumps(build)}")
    gates = {}
    for training in ("switch", "cue_balanced"):
        start = time.perf_counter()
        gates[training] = train_gate(
            GateConfig(training=training), OUT / f"audio_gate_{training}.safetensors"
        )
        print(
            f"{training} gate trained in {time.perf_counter() - start:.0f} s: {json.dumps(gates[training].report)}"
        )
    gate = gates["switch"]
    sections = [
        f"Build: {build['n_items']} items, {build['n_audio']} with audio "
        f"({build['audio_seconds'] / 3600:.1f} h), {build['build_seconds']} s with 2 workers.\n",
        f"Audio gate held-out accuracy: {json.dumps(gate.report['test'])}\n",
        f"Cue-balanced gate held-out accuracy: {json.dumps(gates['cue_balanced'].report['test'])}\n",
    ]
    for name, agent, access in (
        ("always_mute", AlwaysMuteAgent, "A+T"),
        ("text_only", TextOnlyGateAgent, "T"),
        ("audio_gate", lambda: AudioGateAgent(gate), "A+T"),
        ("audio_gate_cue_balanced", lambda: AudioGateAgent(gates["cue_balanced"]), "A+T"),
    ):
        start = time.perf_counter()
        evaluate(OUT / name, run_config(name, access, item_ids("test", FAMILIES)), {name: agent})
        print(f"{name}: {time.perf_counter() - start:.0f} s")
        sections.append(print_report(OUT / name))
    (OUT.parent / "voicegate.md").write_text("\n".join(sections), encoding="utf-8")


if __name__ == "__main__":
    main()
