import hashlib
import subprocess
import sys

import numpy as np
import pytest

from hear_gym.envs.deliveryplan.evidence_audio import (
    EVIDENCE_VOICES,
    TEST_VOICES,
    TRAIN_VOICES,
    evidence_cache,
    evidence_plan,
    evidence_table,
    render_evidence,
)
from hear_gym.envs.deliveryplan.plan import EMOTIONS, SOURCE_KEYS, key_name
from hear_gym.speech.espeak import VOICES
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features
from hear_gym.speech.plans import parse_plan_table, vary_plan
from hear_gym.speech.renderers import SAMPLE_RATE

TEXT = "Kids are talking by the door."
NUMERIC_CUES = ("rate", "pitch", "range", "gain_db", "clause_pause_ms")
PLAN = {
    "rate": 175,
    "pitch": 50,
    "range": 50,
    "gain_db": 0,
    "lead_pause_ms": 0,
    "clause_pause_ms": 150,
    "final_contour": "fall",
}


def test_the_table_plans_every_source_key_and_voices_split_disjointly():
    assert set(evidence_table().labels) == {key_name(*key) for key in SOURCE_KEYS} and len(SOURCE_KEYS) == 15
    assert not set(TRAIN_VOICES) & set(TEST_VOICES) and set(EVIDENCE_VOICES) <= set(VOICES)


@pytest.mark.parametrize("emotion", [e for e in EMOTIONS if e != "neutral"])
def test_strong_intensity_moves_every_cue_further_from_neutral_the_same_way(emotion):
    plans = evidence_table().labels
    neutral, normal, strong = plans["neutral/normal"], plans[f"{emotion}/normal"], plans[f"{emotion}/strong"]
    for cue in NUMERIC_CUES:
        a, b = getattr(normal, cue) - getattr(neutral, cue), getattr(strong, cue) - getattr(neutral, cue)
        assert a * b >= 0 and abs(b) >= abs(a), (emotion, cue, a, b)
    assert sum(getattr(strong, cue) != getattr(normal, cue) for cue in NUMERIC_CUES) >= 3


def test_a_family_table_needs_its_baseline_and_varies_from_it():
    raw = {"baseline": "calm/normal", "labels": {"angry/normal": {**PLAN, "rate": 200}}}
    with pytest.raises(ValueError, match="lacks its baseline plan 'calm/normal'"):
        parse_plan_table("family", raw)
    table = parse_plan_table("family", {**raw, "labels": {**raw["labels"], "calm/normal": PLAN}})
    # no spreads: the varied plan is the table's own
    assert vary_plan(table, "angry/normal", "s", "u").rate == 200 and table.baseline == "calm/normal"


def test_the_plan_varies_by_voice_but_not_by_call():
    plans = {voice: evidence_plan(TEXT, "angry", "strong", voice) for voice in EVIDENCE_VOICES}
    assert evidence_plan(TEXT, "angry", "strong", "m1") == plans["m1"]
    assert len({plan.rate for plan in plans.values()}) == len(EVIDENCE_VOICES)


@pytest.mark.parametrize("renderer", ["espeak", pytest.param("praat", marks=pytest.mark.slow)])
def test_render_is_16k_float32_cached_and_identical_in_another_process(renderer):
    wave = render_evidence(TEXT, "sad", "strong", "f2", renderer=renderer)
    assert wave.dtype == np.float32 and wave.ndim == 1 and SAMPLE_RATE < len(wave) < 6 * SAMPLE_RATE
    hits = evidence_cache(renderer).stats.memory_hits
    assert render_evidence(TEXT, "sad", "strong", "f2", renderer=renderer) is wave
    assert evidence_cache(renderer).stats.memory_hits == hits + 1
    code = (
        "import hashlib; from hear_gym.envs.deliveryplan.evidence_audio import render_evidence; "
        f"w = render_evidence({TEXT!r}, 'sad', 'strong', 'f2', renderer={renderer!r}); "
        "print(hashlib.sha256(w.tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == hashlib.sha256(wave.tobytes()).hexdigest()


def test_strong_anger_is_louder_faster_and_higher_than_strong_sadness_for_every_voice():
    names = list(FEATURE_NAMES)
    for voice in TEST_VOICES:
        angry = prosodic_features(render_evidence(TEXT, "angry", "strong", voice))
        sad = prosodic_features(render_evidence(TEXT, "sad", "strong", voice))
        assert angry[names.index("energy_mean_db")] > sad[names.index("energy_mean_db")] + 3, voice
        assert angry[names.index("f0_mean_st")] > sad[names.index("f0_mean_st")] + 1, voice
        assert angry[names.index("duration_s")] < sad[names.index("duration_s")], voice


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((TEXT, "neutral", "strong", "m1"), {}, "no source key"),
        ((TEXT, "bored", "normal", "m1"), {}, "no source key"),
        ((TEXT, "angry", "normal", "klatt"), {}, "unknown evidence voice"),
        ((TEXT, "angry", "normal", "m1"), {"renderer": "wavenet"}, "unknown renderer"),
        (("  ", "angry", "normal", "m1"), {}, "empty text"),
    ],
)
def test_bad_arguments_get_clear_errors(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        render_evidence(*args, **kwargs)
