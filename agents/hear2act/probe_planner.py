"""``probe_planner@A+T``: the planner (``agents.hear2act.planner``) hearing the user through a
concern probe (``agents.hear2act.audio_probe``) it runs itself on the current turn's audio.

The env's T+S^ condition runs a probe env-side (``ConcernInferrer``) and shows the planner its
sentence; here the agent gets the audio (A+T) and writes that sentence itself. A+T carries the
current user turn only, never the user's opening request, so the probe must be one that needs no
reference (``features`` ``prosody`` or ``logmel``); a ``prosody_relative`` probe, which compares
each turn with the request, is refused. With such a probe the two conditions play the same
dialogue (tested).

The planner reads the probe's verdict as a noisy resolved/unresolved channel at the probe's
operating point on the calibration split's shared assents (``CALIBRATION_REPORT``: recall of
genuine acceptances, share of reluctant ones heard as genuine), never at its test figures; a
probe without them (one trained without an operating point) is refused. Taken as exact, a
probe's verdict loses the real user whenever it errs.

    hear-gym train probe --assents-only --features prosody --max-false-resolved 0.01 --out p.safetensors
    hear-gym eval --cell probe_planner:p.safetensors@A+T --feedback prosody --option turn_cost=0.1
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.hear2act.audio_probe import AudioProbe, ConcernInferrer, channel_rates
from agents.hear2act.planner import PlannerAgent
from hear_gym.speech.renderers import SAMPLE_RATE

AUDIO_KEYS = ("audio", "audio_length")
REFERENCE_FREE = ("prosody", "logmel")  # probe features of one turn alone


class ProbePlannerAgent:
    """``PlannerAgent`` fed by a concern probe listening to the A+T audio (module docstring)."""

    required_access = ("A+T",)

    def __init__(self, probe: AudioProbe) -> None:
        if probe.config.features not in REFERENCE_FREE:
            raise ValueError(
                f"probe_planner hears A+T, the current turn only; a {probe.config.features!r} probe needs "
                f"the opening request as reference: train one with --features {' or '.join(REFERENCE_FREE)}"
            )
        self.inferrer = ConcernInferrer(probe)
        recall, false_resolved = channel_rates(probe)
        self.planner = PlannerAgent(state_recall=recall, state_false_resolved=false_resolved)
        self.reset()

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> ProbePlannerAgent:
        return cls(AudioProbe.load(path))

    def configure(self, env_options: Mapping[str, Any]) -> None:
        """The runner's hook; the planner takes the env options it plans with."""
        self.planner.configure(env_options)

    def reset(self, seed: int | None = None) -> None:
        self.planner.reset(seed)

    def act(self, observation: dict[str, Any]) -> int:
        if not all(key in observation for key in AUDIO_KEYS):
            raise KeyError(f"{type(self).__name__} needs the user's audio (access A+T)")
        waveform = observation["audio"][: int(observation["audio_length"][0])]
        sentence = self.inferrer.infer(waveform, SAMPLE_RATE, observation["transcript"])
        words = {k: v for k, v in observation.items() if k not in AUDIO_KEYS}
        return self.planner.act({**words, "inferred_state": sentence})
