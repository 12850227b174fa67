"""A learning model's vocabulary is drawn from the text of the envs it is built for
(``build_tiny_causal_lm(..., env_ids=...)``): another family's text can change without re-drawing
the model a learning test trains, which is what made those tests flip when unrelated item texts
changed."""

from __future__ import annotations

import dataclasses

import pytest

import agents.training_material as material_module
from training.tiny_model import _tokenizer, corpus

DELIVERYPLAN, VOICEGATE = "hear_gym/DeliveryPlan-v0", "hear_gym/VoiceGate-v0"


def _with_new_voicegate_text(monkeypatch):
    """VoiceGate's corpus gains words no other family uses, as an item-text change would."""
    real = material_module.training_material

    def patched(env_id):
        found = real(env_id)
        if env_id != VOICEGATE:
            return found
        extra = ["zyxomorphic quindle barvex " * 40]
        return dataclasses.replace(found, corpus=lambda: [*found.corpus(), *extra])

    monkeypatch.setattr(material_module, "training_material", patched)


def _vocabulary(env_ids):
    return _tokenizer(512, env_ids=env_ids).get_vocab()


def test_a_familys_vocabulary_ignores_other_families_text(monkeypatch):
    before = _vocabulary((DELIVERYPLAN,))
    assert set(corpus((DELIVERYPLAN,))) < set(corpus())
    _with_new_voicegate_text(monkeypatch)
    assert _vocabulary((DELIVERYPLAN,)) == before


def test_the_shared_vocabulary_moves_with_any_familys_text(monkeypatch):
    """The control: built from every family, the same change re-draws the vocabulary."""
    before = _vocabulary(None)
    _with_new_voicegate_text(monkeypatch)
    assert _vocabulary(None) != before


def test_an_unknown_env_is_named():
    with pytest.raises(ValueError, match="no registered env 'hear_gym/Nope-v0'"):
        corpus(("hear_gym/Nope-v0",))
