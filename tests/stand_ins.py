"""Stand-in models for the pluggable T+S^ and T+SER channels: they read the audio they are
given (never a label), so tests exercise the real plumbing without a trained probe."""

import numpy as np

from hear_gym.speech.features import FEATURE_NAMES, prosodic_features


class PitchRangeInferrer:
    """Wide pitch range reads as resolved."""

    def infer(self, waveform, sample_rate, transcript, reference):
        f0_range = prosodic_features(waveform, sample_rate)[FEATURE_NAMES.index("f0_range_st")]
        return "The user sounds satisfied." if f0_range > 6 else "The user sounds unconvinced."


class LoudnessAffect:
    def classify(self, waveform, sample_rate):
        return "happy" if np.sqrt(np.mean(waveform**2)) > 0.05 else "neutral"


PLUGINS = {"T+S^": {"state_inferrer": PitchRangeInferrer()}, "T+SER": {"affect_classifier": LoudnessAffect()}}
