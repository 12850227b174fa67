"""A trained concern probe (``agents.hear2act.audio_probe``) as an ear for the belief planner:
its score turned into calibrated likelihoods instead of a thresholded verdict.

Calibration (``calibrate_likelihoods``) is Platt scaling on the calibration split's shared
assents (the one decision the words leave open): ``P(resolved | s) = sigmoid(a s + b)`` for the
probe's resolved log-odds ``s``, so the log-likelihood ratio of a turn is
``a s + b - log(prior odds of resolved there)``. The same split gives each class's share of
ratios below ``LOOKAHEAD_EDGES``, what the planner expects to hear next. Both go into the
probe's report (``LIKELIHOOD_REPORT``) and its checkpoint.

The probe is only calibrated on shared assents, so the ear listens there alone: on any other
turn (a stated requirement, an answer to an ask) it reports nothing (likelihood ratio 1).

Two ways to hear:

* ``ProbeEar`` (A+T): the agent runs a reference-free probe (``prosody`` or ``logmel``
  features) on the turn's audio itself;
* ``InferredEar`` (T+S^): the env runs the probe through ``LikelihoodInferrer``, which hears
  the turn against the speaker's opening request (``prosody_relative``, the strongest probe)
  and writes its calibrated ratio into the sentence; the ear reads the number back.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from agents.hear2act.audio_probe import RESOLVED, AudioProbe, ProbeData, turn_features
from agents.hear2act.ears import (
    LOOKAHEAD_EDGES,
    BinnedChannel,
    Likelihoods,
    resolved_bins,
    resolved_likelihoods,
)
from hear_gym.envs.hear2act.user.realizer import SHARED_ACCEPTANCE_POOL
from hear_gym.speech.renderers import SAMPLE_RATE

LIKELIHOOD_REPORT = "likelihoods"
REFERENCE_FREE = ("prosody", "logmel")
_POOL = frozenset(SHARED_ACCEPTANCE_POOL)
_SENTENCE = "Delivery log-likelihood ratio, genuine to reluctant acceptance: {:+.4f}"
_NUMBER = re.compile(r"log-likelihood ratio, genuine to reluctant acceptance: ([+-]?\d+(?:\.\d+)?)")
MAX_RATIO = 12.0  # |log-likelihood ratio| is clipped: no single turn is taken as certain


def calibrate_likelihoods(probe: AudioProbe, dev: ProbeData) -> dict[str, Any]:
    """Platt scaling of ``probe``'s resolved log-odds on ``dev`` (shared assents); stored in
    ``probe.report[LIKELIHOOD_REPORT]`` and returned."""
    scores = probe.resolved_log_odds(dev.x).astype(np.float64)
    resolved = dev.y == RESOLVED
    if resolved.all() or not resolved.any():
        raise ValueError("calibrating likelihoods needs genuine and reluctant acceptances")
    fit = LogisticRegression(C=1e4).fit(scores[:, None], resolved)
    share = float(resolved.mean())
    calibration = {
        "slope": float(fit.coef_[0, 0]),
        "intercept": float(fit.intercept_[0]),
        "prior_log_odds": math.log(share / (1 - share)),
        "n": int(len(scores)),
    }
    ratios = np.array([log_ratio(calibration, s) for s in scores])
    calibration["cdf_resolved"] = [float((ratios[resolved] <= e).mean()) for e in LOOKAHEAD_EDGES]
    calibration["cdf_unresolved"] = [float((ratios[~resolved] <= e).mean()) for e in LOOKAHEAD_EDGES]
    probe.report[LIKELIHOOD_REPORT] = calibration
    return calibration


def log_ratio(calibration: dict[str, Any], score: float) -> float:
    """log P(score | resolved) - log P(score | unresolved), clipped to ``MAX_RATIO``."""
    value = calibration["slope"] * score + calibration["intercept"] - calibration["prior_log_odds"]
    return float(np.clip(value, -MAX_RATIO, MAX_RATIO))


def _calibration(probe: AudioProbe) -> dict[str, Any]:
    calibration = probe.report.get(LIKELIHOOD_REPORT)
    if calibration is None:
        raise ValueError(
            f"a concern probe without {LIKELIHOOD_REPORT!r} in its report: calibrate it on the dev split's "
            "shared assents (agents.hear2act.probe_ear.calibrate_likelihoods) for a belief planner to hear it"
        )
    return calibration


def _lookahead(calibration: dict[str, Any]) -> BinnedChannel:
    return resolved_bins(calibration["cdf_resolved"], calibration["cdf_unresolved"])


def _is_shared_assent(transcript: str) -> bool:
    last = transcript.rsplit("\n", 1)[-1]
    return last.startswith("User: ") and last[len("User: ") :] in _POOL


def _likelihoods(ratio: float) -> Likelihoods:
    return resolved_likelihoods(math.exp(ratio), 1.0)


class LikelihoodInferrer:
    """T+S^ ``StateInferrer``: the probe's calibrated log-likelihood ratio of the turn, on shared
    assents (0 elsewhere), as one sentence."""

    def __init__(self, probe: AudioProbe) -> None:
        if probe.config.task != "concern":
            raise ValueError("LikelihoodInferrer needs a concern probe")
        self.probe, self.calibration = probe, _calibration(probe)

    def infer(
        self, waveform: np.ndarray, sample_rate: int, transcript: str, reference: np.ndarray | None = None
    ) -> str:
        if sample_rate != SAMPLE_RATE:
            raise ValueError(f"expected {SAMPLE_RATE} Hz audio, got {sample_rate}")
        ratio = 0.0
        if _is_shared_assent(transcript):
            x = turn_features(self.probe.config.features, waveform, reference)[None, :]
            ratio = log_ratio(self.calibration, float(self.probe.resolved_log_odds(x)[0]))
        return _SENTENCE.format(ratio)


class InferredEar:
    """Reads a ``LikelihoodInferrer``'s sentence (T+S^)."""

    required_access = ("T+S^",)
    exact, informative = False, True

    def __init__(self, probe: AudioProbe) -> None:
        self.channel = _lookahead(_calibration(probe))

    def reset(self, seed: int | None) -> None:
        pass

    def hear(self, observation: dict[str, Any]) -> Likelihoods:
        sentence = observation.get("inferred_state")
        if sentence is None:
            raise KeyError("InferredEar reads the T+S^ sentence: it needs access T+S^")
        found = _NUMBER.search(sentence)
        if found is None:
            raise ValueError(f"not a LikelihoodInferrer sentence: {sentence!r}")
        return _likelihoods(float(found.group(1)))

    def lookahead(self) -> BinnedChannel:
        return self.channel


class ProbeEar:
    """Runs a reference-free concern probe on the A+T audio of shared assents."""

    required_access = ("A+T",)
    exact, informative = False, True

    def __init__(self, probe: AudioProbe) -> None:
        if probe.config.features not in REFERENCE_FREE:
            raise ValueError(
                f"A+T carries the current turn only; a {probe.config.features!r} probe needs the opening "
                f"request: use features {' or '.join(REFERENCE_FREE)}, or hear it under T+S^ (InferredEar)"
            )
        self.probe, self.calibration = probe, _calibration(probe)

    @classmethod
    def load(cls, path: str | Path) -> ProbeEar:
        return cls(AudioProbe.load(path))

    def reset(self, seed: int | None) -> None:
        pass

    def hear(self, observation: dict[str, Any]) -> Likelihoods:
        if "audio" not in observation or "audio_length" not in observation:
            raise KeyError("ProbeEar needs the user's audio (access A+T)")
        if not _is_shared_assent(observation["transcript"]):
            return _likelihoods(0.0)
        waveform = observation["audio"][: int(observation["audio_length"][0])]
        x = turn_features(self.probe.config.features, waveform, None)[None, :]
        return _likelihoods(log_ratio(self.calibration, float(self.probe.resolved_log_odds(x)[0])))

    def lookahead(self) -> BinnedChannel:
        return _lookahead(self.calibration)
