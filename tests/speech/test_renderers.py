import subprocess
import sys

import numpy as np
import pytest

from hear_gym.envs.hear2act.user.states import SPOKEN_LABELS as DELIVERY_LABELS
from hear_gym.speech import espeak
from hear_gym.speech.cache import MAGIC, RenderCache
from hear_gym.speech.features import FEATURE_NAMES, log_mel, prosodic_features
from hear_gym.speech.plans import base_plans
from hear_gym.speech.renderers import (
    SAMPLE_RATE,
    EspeakRenderer,
    NeuralRenderer,
    PraatRenderer,
    RenderRequest,
    cache_key,
    spoken_text,
)

RENDERERS = [EspeakRenderer(), PraatRenderer(), NeuralRenderer()]
TEXT = "Okay, sounds good. I need a daytime flight."


def test_every_delivery_label_has_a_plan():
    assert set(base_plans()) == set(DELIVERY_LABELS) and len(DELIVERY_LABELS) == 14
    hesitant = RenderRequest(TEXT, "hesitant", "m1")
    assert hesitant.plan() == hesitant.plan() != RenderRequest(TEXT + " Yes.", "hesitant", "m1").plan()
    with pytest.raises(ValueError, match="unknown delivery label"):
        RenderRequest(TEXT, "sarcastic", "m1").plan()


def test_final_punctuation_carries_the_contour():
    assert spoken_text("Okay, sounds good.", "en", "rise") == "Okay, sounds good?"
    assert spoken_text("Fine", "en", "level") == "Fine,"
    assert spoken_text("\u597d\u3002", "cmn", "rise") == "\u597d\uff1f"


def test_clause_pauses_are_inserted_by_the_renderer():
    renderer = EspeakRenderer()
    plan_short = renderer.render(RenderRequest(TEXT, "impatient", "m1", prosody="clear"))
    plan_long = renderer.render(RenderRequest(TEXT, "hesitant", "m1", prosody="clear"))
    assert sum(bool(c.any()) for c in espeak.synthesize_clauses(TEXT, "m1")) == 3
    silent = lambda w: np.mean(np.abs(w) < 1e-4)  # noqa: E731
    assert silent(plan_long.waveform) > silent(plan_short.waveform) + 0.1


@pytest.mark.parametrize("renderer", RENDERERS, ids=lambda r: r.name)
def test_render_is_deterministic_16k_float32(renderer):
    request = RenderRequest(TEXT, "hesitant", "f2")
    a, b = renderer.render(request), renderer.render(request)
    assert a.sample_rate == SAMPLE_RATE and a.waveform.dtype == np.float32
    assert np.array_equal(a.waveform, b.waveform) and a.plan == b.plan
    assert a.plan == renderer.describe(request)
    assert np.abs(a.waveform).max() <= 1.0 and len(a.waveform) > SAMPLE_RATE


@pytest.mark.parametrize("renderer", RENDERERS, ids=lambda r: r.name)
def test_render_is_identical_in_another_process(renderer):
    code = (
        "import hashlib; from hear_gym.speech.renderers import make_renderer, RenderRequest; "
        f"w = make_renderer({renderer.name!r}).render(RenderRequest({TEXT!r}, 'lukewarm', 'm4')).waveform; "
        "print(hashlib.sha256(w.tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import hashlib

    here = renderer.render(RenderRequest(TEXT, "lukewarm", "m4")).waveform
    assert out.stdout.strip() == hashlib.sha256(here.tobytes()).hexdigest()


@pytest.mark.parametrize(
    "renderer",
    [*RENDERERS[:2], pytest.param(RENDERERS[2], marks=pytest.mark.slow)],  # neural: 4 s
    ids=lambda r: r.name,
)
def test_delivery_shows_in_the_measured_prosody(renderer):
    # the clear table's labels lie far apart, so one utterance each shows that plans are realized
    names = list(FEATURE_NAMES)

    def features(label):
        return prosodic_features(renderer.render(RenderRequest(TEXT, label, "m2", prosody="clear")).waveform)

    resolved, reluctant = features("satisfied"), features("underwhelmed")
    assert resolved[names.index("f0_range_st")] > reluctant[names.index("f0_range_st")] + 2
    assert resolved[names.index("f0_mean_st")] > reluctant[names.index("f0_mean_st")]
    assert reluctant[names.index("lead_silence_s")] > resolved[names.index("lead_silence_s")] + 0.15
    assert resolved[names.index("energy_mean_db")] > reluctant[names.index("energy_mean_db")] + 3
    rising, falling = features("hesitant"), features("firm")
    assert rising[names.index("f0_final_slope_st_per_s")] > falling[names.index("f0_final_slope_st_per_s")]


def test_mandarin_renders():
    out = EspeakRenderer().render(
        RenderRequest("\u597d\u7684\uff0c\u542c\u8d77\u6765\u4e0d\u9519\u3002", "warm", "f4", "cmn")
    )
    assert len(out.waveform) > SAMPLE_RATE // 2 and out.plan["spoken_text"].endswith("\u3002")


def test_bad_requests():
    with pytest.raises(ValueError, match="unknown voice"):
        RenderRequest("hi", "warm", "robot")
    with pytest.raises(ValueError, match="empty"):
        RenderRequest("  ", "warm", "m1")


def test_cache_memory_disk_and_corruption(tmp_path):
    renderer = EspeakRenderer()
    request = RenderRequest("That won't work.", "firm", "m1")
    cache = RenderCache(renderer, max_bytes=1, disk_dir=tmp_path)
    cold = cache.render(request)
    warm = cache.render(request)
    assert cache.stats.renders == 1 and cache.stats.memory_hits == 1
    assert np.array_equal(cold.waveform, warm.waveform) and not warm.waveform.flags.writeable
    assert warm.plan == cold.plan

    cache.render(RenderRequest("Sure.", "warm", "m1"))  # evicts the first from memory (1 byte)
    from_disk = cache.render(request)
    assert cache.stats.disk_hits == 1 and np.array_equal(from_disk.waveform, cold.waveform)

    fresh = RenderCache(renderer, disk_dir=tmp_path)
    assert fresh.contains(request)
    entry = tmp_path / cache_key(renderer, request)[:2] / f"{cache_key(renderer, request)}.f32"
    assert entry.read_bytes().startswith(MAGIC)
    data = bytearray(entry.read_bytes())
    data[-7] ^= 0xFF  # flip bits in the samples
    entry.write_bytes(bytes(data))
    again = fresh.render(request)
    assert fresh.stats.corrupt == 1 and fresh.stats.renders == 1
    assert np.array_equal(again.waveform, cold.waveform)
    entry.write_bytes(b"short")  # truncated
    assert np.array_equal(RenderCache(renderer, disk_dir=tmp_path).render(request).waveform, cold.waveform)


def test_features_are_cached_and_log_mel_has_frames():
    w = EspeakRenderer().render(RenderRequest(TEXT, "neutral", "f1")).waveform
    first = prosodic_features(w)
    assert prosodic_features(w.copy()) is first and first.shape == (len(FEATURE_NAMES),)
    mel = log_mel(w)
    assert mel.shape == (1 + (len(w) - 400) // 160, 64) and np.isfinite(mel).all()


def test_feature_store_on_disk_survives_the_process(tmp_path):
    import subprocess
    import sys

    code = (
        "import numpy as np; from hear_gym.speech.features import prosodic_features; "
        "from hear_gym.speech.renderers import EspeakRenderer, RenderRequest; "
        "w = EspeakRenderer().render(RenderRequest('Sure, that works.', 'warm', 'f1')).waveform; "
        "print(prosodic_features(w).tolist())"
    )
    env = {**__import__("os").environ, "HEAR_GYM_CACHE": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (tmp_path / "features-v3.sqlite3").exists()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout
    (tmp_path / "features-v3.sqlite3").write_bytes(b"not a database")
    third = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert third.stdout == first.stdout  # a damaged store is ignored, not trusted


def test_feature_caches_key_by_content_not_by_object():
    from hear_gym.speech.features import pooled_log_mel

    rng = np.random.default_rng(0)
    wave = (0.1 * rng.standard_normal(16_000)).astype(np.float32)
    frozen = wave.copy()
    frozen.flags.writeable = False
    mel = log_mel(wave)
    assert np.array_equal(pooled_log_mel(frozen), np.concatenate([mel.mean(axis=0), mel.std(axis=0)]))
    assert np.array_equal(prosodic_features(frozen), prosodic_features(wave))
    before = pooled_log_mel(wave)
    wave[:8000] *= 0.1  # a writable array is hashed again on every call
    assert not np.array_equal(pooled_log_mel(wave), before)


def test_clips_shorter_than_the_analysis_window_get_zero_features():
    tone = (0.1 * np.sin(2 * np.pi * 150 * np.arange(16_000) / 16_000)).astype(np.float32)
    for seconds in (0.05, 0.11, 0.127):
        assert not prosodic_features(tone[: int(seconds * 16_000)].copy()).any()
    assert prosodic_features(tone[:2_400].copy())[0] > 0  # 0.15 s is analysed
