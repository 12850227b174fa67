"""The source evidence as speech: a case's source utterance spoken in its source emotion and
intensity, so that an agent under access ``A`` hears the cue it cites.

VoxReason (arXiv:2609.03203) plans from derived RAVDESS labels only; here each of the 15 source
keys has a prosody plan in the family's own table (``evidence_prosody.json``: directions from the
acted-emotion prosody literature, strong intensity further from neutral than normal), varied per
voice (habitual rate, pitch, range, loudness, pauses and an expressiveness that scales the emotion
effects) and per key and text, exactly as the speech layer varies its delivery-label tables
(``hear_gym.speech.plans.vary_plan``). Both speech-layer renderers realise the plans; renderings
go through the speech layer's content-addressed ``RenderCache`` (the plan table's name is part of
every key), so the same request gives bit-identical audio in and across processes.

Voices: ``TRAIN_VOICES`` and ``TEST_VOICES`` are disjoint, so a probe trained on one set is
scored on speakers it never heard.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from hear_gym.envs.deliveryplan.cases import TEST_VOICES, TRAIN_VOICES
from hear_gym.envs.deliveryplan.plan import EMOTIONS, INTENSITIES, SOURCE_KEYS, key_name
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import PlanTable, ProsodyPlan, parse_plan_table, vary_plan
from hear_gym.speech.renderers import RENDERERS, RenderRequest, make_renderer

EVIDENCE_PROSODY = "deliveryplan-evidence"
EVIDENCE_VOICES: tuple[str, ...] = TRAIN_VOICES + TEST_VOICES
CACHE_BYTES = 64 * 2**20  # about 400 two-second clips per renderer


@cache
def evidence_table() -> PlanTable:
    """The emotion x intensity plan table; every source key has exactly one plan."""
    raw = json.loads((resources.files(__package__) / "evidence_prosody.json").read_text("utf-8"))
    table = parse_plan_table(EVIDENCE_PROSODY, raw)
    expected = {key_name(*key) for key in SOURCE_KEYS}
    if set(table.labels) != expected:
        raise ValueError(
            f"evidence_prosody.json must plan exactly the source keys: missing "
            f"{sorted(expected - set(table.labels))}, unexpected {sorted(set(table.labels) - expected)}"
        )
    return table


@dataclass(frozen=True)
class EvidenceRequest(RenderRequest):
    """A render request whose plan comes from the evidence table (``delivery`` is a source key's
    name, ``"angry/strong"``) rather than from one of the speech layer's delivery-label tables."""

    prosody: str = EVIDENCE_PROSODY

    def __post_init__(self) -> None:
        if self.prosody != EVIDENCE_PROSODY:
            raise ValueError(f"an evidence request uses the {EVIDENCE_PROSODY!r} table, got {self.prosody!r}")
        if self.delivery not in evidence_table().labels:
            raise ValueError(f"unknown source key {self.delivery!r}; keys: {list(evidence_table().labels)}")
        RenderRequest(self.text, "neutral", self.voice, self.language)  # the text, voice and language checks

    def plan(self) -> ProsodyPlan:
        return vary_plan(evidence_table(), self.delivery, self.speaker_key(), self.variation_key())


def evidence_request(text: str, emotion: str, intensity: str, voice: str) -> EvidenceRequest:
    if (emotion, intensity) not in SOURCE_KEYS:
        raise ValueError(
            f"no source key ({emotion!r}, {intensity!r}); emotions {EMOTIONS}, intensities "
            f"{INTENSITIES}, neutral at normal intensity only"
        )
    if voice not in EVIDENCE_VOICES:
        raise ValueError(f"unknown evidence voice {voice!r}; voices: {EVIDENCE_VOICES}")
    return EvidenceRequest(text=text, delivery=key_name(emotion, intensity), voice=voice)


@cache
def evidence_cache(renderer: str) -> RenderCache:
    """This process's cache of evidence renderings for one renderer (memory only, bounded)."""
    return RenderCache(make_renderer(renderer), max_bytes=CACHE_BYTES)


def render_evidence(
    text: str, emotion: str, intensity: str, voice: str, *, renderer: str = "espeak"
) -> np.ndarray:
    """The source utterance ``text`` spoken by ``voice`` in ``emotion`` at ``intensity``: 16 kHz
    mono float32, read-only (shared with the cache), bit-identical for identical arguments."""
    if renderer not in RENDERERS:
        raise ValueError(f"unknown renderer {renderer!r}; renderers: {sorted(RENDERERS)}")
    return evidence_cache(renderer).render(evidence_request(text, emotion, intensity, voice)).waveform


def evidence_plan(text: str, emotion: str, intensity: str, voice: str) -> ProsodyPlan:
    """The varied prosody plan ``render_evidence`` realises for these arguments."""
    return evidence_request(text, emotion, intensity, voice).plan()
