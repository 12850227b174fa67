"""Which word was stressed is heard at the word: no position-blind utterance scalar decides it
(at or under 0.65 held out) and the prosodic classifier beats every scalar
(``agents/ambiguity/stress_shortcuts.py``). Slow tier: it renders every English stress pair."""

import pytest

from agents.ambiguity.stress_shortcuts import POSITION_BLIND, audit
from hear_gym.envs.ambiguity import render

BOUND = 0.65


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["espeak", "praat"])
def test_stress_is_heard_at_the_word(renderer):
    report = audit(("m3", "f2"), renderer)
    accuracy = report["balanced_accuracy"]
    assert max(accuracy[name] for name in POSITION_BLIND) <= BOUND, accuracy
    assert report["classifier"] > max(accuracy.values()), report


@pytest.mark.slow
def test_the_check_fails_on_an_accent_over_the_declining_baseline(monkeypatch):
    """The leaky construction: no levelled baseline and the accent over the whole word, so an
    early accent tops a higher baseline than a late one and the F0 range gives it away."""
    monkeypatch.setattr(render, "_levelled", lambda reference: lambda t, st: st)
    monkeypatch.setattr(render, "ACCENT_S", 10.0)
    accuracy = audit(("m3",), "espeak")["balanced_accuracy"]
    assert max(accuracy[name] for name in POSITION_BLIND) > BOUND, accuracy
