"""The neural renderer's own behaviour (the shared renderer tests in ``test_renderers.py`` run on it
too: determinism in and across processes, delivery visible in the measured prosody)."""

import sys

import numpy as np
import pytest

from hear_gym.speech import espeak, neural
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features
from hear_gym.speech.renderers import NeuralRenderer, RenderRequest, make_renderer

TEXT = "Okay, sounds good. I need a daytime flight."


def test_a_missing_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "piper", None)  # import piper now raises ImportError
    with pytest.raises(neural.NeuralExtraMissing, match=r"hear-gym\[neural\]"):
        make_renderer("neural")


def test_every_voice_id_is_its_own_speaker():
    assert set(neural.NEURAL_SPEAKERS) == set(espeak.VOICES)
    assert len(set(neural.NEURAL_SPEAKERS.values())) == len(espeak.VOICES)


@pytest.mark.slow  # 4 s
def test_speakers_and_rate_show_in_the_audio():
    renderer = NeuralRenderer()
    f0 = FEATURE_NAMES.index("f0_mean_st")

    def render(label, voice):
        return renderer.render(RenderRequest(TEXT, label, voice, prosody="clear"))

    male, female = render("firm", "m2"), render("firm", "f3")
    assert prosodic_features(female.waveform)[f0] > prosodic_features(male.waveform)[f0] + 8
    fast, slow = render("impatient", "m2"), render("hesitant", "m2")
    assert fast.plan["length_scale"] < 1 < slow.plan["length_scale"]
    speech = lambda w: np.sum(np.abs(w) > 1e-3)  # noqa: E731
    assert speech(fast.waveform) < 0.85 * speech(slow.waveform)


def test_english_only():
    with pytest.raises(ValueError, match="English only"):
        NeuralRenderer().describe(RenderRequest("\u597d\u7684\u3002", "warm", "f4", "cmn"))


def test_phrases_are_synthesized_apart():
    assert neural.phrases(" Okay, sounds good.  I need a flight ") == [
        "Okay,",
        "sounds good.",
        "I need a flight",
    ]
    assert len(neural.synthesize(TEXT, 1.0)) == 3
