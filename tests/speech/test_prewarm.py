"""``hear_gym.speech.prewarm``: a plan's size said ahead, then rendered in parallel into the
disk caches, resumable."""

from __future__ import annotations

import numpy as np
import pytest

from hear_gym.speech import cache as cache_module
from hear_gym.speech import features
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.prewarm import estimate, prewarm, spoken_seconds
from hear_gym.speech.renderers import EspeakRenderer, RenderRequest

REQUESTS = [
    RenderRequest(text, delivery, voice, speaker="prewarm-test")
    for text, delivery, voice in [
        ("Okay, sounds good.", "lukewarm", "m1"),
        ("That won't work. I need a direct flight with no layovers.", "firm", "f2"),
        (
            "I'm looking for a cheap flight to Denver next month, under three hundred dollars.",
            "neutral",
            "m3",
        ),
        ("Honestly, I'm happy with this one.", "enthusiastic", "f4"),
        ("Hmm, I'm not sure about this one. I'd really prefer something quieter.", "concerned", "m7"),
        ("Sure, that works.", "flat", "f1"),
    ]
]


def test_the_size_estimate_is_near_the_rendered_audio():
    renderer = EspeakRenderer()
    seconds = [len(renderer.render(r).waveform) / 16_000 for r in REQUESTS]
    for request, actual in zip(REQUESTS, seconds, strict=True):
        assert spoken_seconds(request) == pytest.approx(actual, rel=0.35), request.text
    planned = estimate(REQUESTS)
    assert planned.audio_seconds == pytest.approx(sum(seconds), rel=0.15)
    assert planned.audio_bytes == pytest.approx(sum(seconds) * 16_000 * 4, rel=0.15)


def test_a_parallel_prewarm_fills_both_stores_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("HEAR_GYM_CACHE", str(tmp_path / "root"))
    audio = tmp_path / "audio"
    first = prewarm(REQUESTS, "espeak", audio, workers=2, progress=False)
    assert (first.rendered, first.already_rendered, first.measured) == (len(REQUESTS), 0, len(REQUESTS))
    assert len(list(audio.rglob("*.f32"))) == len(REQUESTS)
    again = prewarm(REQUESTS, "espeak", audio, workers=2, progress=False)
    assert (again.rendered, again.already_rendered, again.measured) == (0, len(REQUESTS), 0)
    # The features stored are those of the audio, read back by request with nothing rendered.
    features._CACHE.clear()
    monkeypatch.setattr(EspeakRenderer, "render", lambda *a: pytest.fail("rendered a stored utterance"))
    reader = RenderCache(EspeakRenderer(), disk_dir=audio)
    for request in REQUESTS:
        from_audio = features._compute(np.array(reader.waveform(request)), 16_000)
        assert np.array_equal(reader.prosodic_features(request), from_audio)


def test_features_only_keep_no_audio_and_need_none(tmp_path, monkeypatch):
    monkeypatch.setenv("HEAR_GYM_CACHE", str(tmp_path))
    features._CACHE.clear()  # what earlier tests in this process measured
    tally = prewarm(REQUESTS[:2], "espeak", None, workers=1, progress=False)
    assert (tally.rendered, tally.measured) == (2, 2)
    features._CACHE.clear()
    monkeypatch.setattr(cache_module.RenderCache, "waveform", lambda *a: pytest.fail("audio read"))
    reader = RenderCache(EspeakRenderer())
    assert all(reader.prosodic_features(r).shape == (features.N_FEATURES,) for r in REQUESTS[:2])


def test_a_prewarm_that_keeps_nothing_is_refused():
    with pytest.raises(ValueError, match="nothing to keep"):
        prewarm(REQUESTS, "espeak", None, features=False, progress=False)


def test_the_render_caches_checksum_is_the_clips_feature_key(tmp_path):
    """A clip read from the disk store is keyed for the features by the digest its entry was
    checked with, which must be the key hashing the samples gives (else every warm read would
    miss the feature store)."""
    RenderCache(EspeakRenderer(), disk_dir=tmp_path).waveform(REQUESTS[0])
    loaded = RenderCache(EspeakRenderer(), disk_dir=tmp_path).waveform(REQUESTS[0])  # from disk
    assert not loaded.flags.writeable
    assert features._content_key(loaded, 16_000, b"") == features._content_key(np.array(loaded), 16_000, b"")
