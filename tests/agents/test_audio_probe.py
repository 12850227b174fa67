import json
from dataclasses import asdict

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.hear2act.audio_probe import (
    AFFECT_OF_DELIVERY,
    ASSENT_DRAWS,
    CALIBRATION_REPORT,
    RESOLVED,
    UNRESOLVED,
    AffectPredictor,
    AudioProbe,
    ConcernInferrer,
    ProbeConfig,
    build_data,
    calibrate,
    fit,
    per_class_accuracy,
    train_probe,
)
from agents.hear2act.baselines import StateAwareAgent, reads_resolved
from hear_gym.envs.hear2act.audio import AFFECT_LABELS
from hear_gym.envs.hear2act.user.states import SPOKEN_LABELS as DELIVERY_LABELS
from hear_gym.eval.runner import run_episode
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import make_renderer

# The clear plan table, so that 4 training scenarios suffice to check the pipeline; how hard the
# default (paper) table is to hear is measured in test_prosody_tables.py.
SMALL = dict(max_scenarios=4, epochs=150, prosody="clear")


@pytest.fixture(scope="module")
def cache():
    return RenderCache(make_renderer("espeak"))


@pytest.fixture(scope="module")
def concern(cache):
    config = ProbeConfig(task="concern", **SMALL)
    return fit(config, build_data(config, "train", cache, seed=0)), build_data(config, "test", cache, seed=1)


def test_affect_mapping_covers_every_delivery_with_the_four_ser_labels():
    assert set(AFFECT_OF_DELIVERY) == set(DELIVERY_LABELS)
    assert set(AFFECT_OF_DELIVERY.values()) == set(AFFECT_LABELS)


def test_concern_probe_learns_from_audio_and_round_trips(concern, tmp_path):
    probe, test = concern
    report = per_class_accuracy(probe, test)
    assert report["balanced"] > 0.8, report  # held-out scenarios, 4 train scenarios only
    path = tmp_path / "concern.safetensors"
    probe.report = {"test": report}
    probe.save(path)
    loaded = AudioProbe.load(path)
    assert loaded.config == probe.config and loaded.report == probe.report
    assert np.array_equal(loaded.predict_features(test.x), probe.predict_features(test.x))


def test_checkpoints_from_before_plan_tables_were_trained_on_clear(concern, tmp_path):
    probe, _ = concern
    config = {k: v for k, v in asdict(probe.config).items() if k != "prosody"}
    probe.save_checkpoint(tmp_path / "old.safetensors", {"config": json.dumps(config), "report": "{}"})
    assert AudioProbe.load(tmp_path / "old.safetensors").config.prosody == "clear"


def test_training_is_deterministic(cache):
    config = ProbeConfig(task="affect", features="prosody", **SMALL)
    data = build_data(config, "train", cache, seed=0)
    a, b = fit(config, data), fit(config, data)
    for (name, wa), (_, wb) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        assert torch.equal(wa, wb), name


def test_inferrer_drives_the_state_aware_agent_in_t_s_hat(concern):
    probe, _ = concern
    env = gym.make(
        "hear_gym/Hear2Act-v0",
        access="T+S^",
        state_inferrer=ConcernInferrer(probe),
        item_ids=["budget_airline_tickets-00"],
    )
    obs, _ = env.reset(seed=0)
    assert obs["inferred_state"] in ConcernInferrer.SENTENCES.values()
    record = run_episode(env, StateAwareAgent(), {"item_id": "budget_airline_tickets-00"}, seed=0)
    assert record["terminated"] or record["truncated"]
    assert {reads_resolved(s) for s in ConcernInferrer.SENTENCES.values()} == {True, False}


def test_wrong_probe_kinds_and_files_are_refused(concern, tmp_path):
    probe, _ = concern
    with pytest.raises(ValueError, match="needs an affect probe"):
        AffectPredictor(probe)
    bad = tmp_path / "bad.safetensors"
    from safetensors.torch import save_file

    save_file({"x": torch.zeros(1)}, str(bad))
    with pytest.raises(ValueError, match="not a hear_gym probe"):
        AudioProbe.load(bad)
    with pytest.raises(ValueError, match="task must be"):
        ProbeConfig(task="emotion")
    with pytest.raises(ValueError, match="unknown prosody plan table"):
        ProbeConfig(prosody="subtle")


@pytest.fixture(scope="module")
def calibrated(cache):
    config = ProbeConfig(task="concern", assents_only=True, max_false_resolved=0.0, **SMALL)
    probe = fit(config, build_data(config, "train", cache, seed=0, assents=True))
    dev = build_data(config, "dev", cache, seed=2, assents=True)
    probe.threshold = calibrate(probe, dev)
    return probe, dev


def test_assent_data_holds_only_shared_assents_of_both_kinds(calibrated):
    _, dev = calibrated
    # 4 scenarios x ASSENT_DRAWS draws of each assenting candidate; both classes occur
    assert len(dev.y) % ASSENT_DRAWS == 0 and set(dev.y.tolist()) == {RESOLVED, UNRESOLVED}


def test_calibration_bounds_false_resolved_on_the_calibration_split(calibrated):
    probe, dev = calibrated
    reluctant = dev.x[dev.y == UNRESOLVED]
    assert not (probe.predict_features(reluctant) == RESOLVED).any()  # max_false_resolved=0
    loose = ProbeConfig(task="concern", max_false_resolved=0.5, **SMALL)
    half = AudioProbe(loose, probe.model, probe.mean, probe.std)
    half.threshold = calibrate(half, dev)
    share = (half.predict_features(reluctant) == RESOLVED).mean()
    assert share <= 0.5 and half.threshold <= probe.threshold
    # the threshold only moves the boundary: scores above it read resolved, the rest do not
    scores = probe.resolved_log_odds(dev.x)
    assert np.array_equal(probe.predict_features(dev.x) == RESOLVED, scores > probe.threshold)


def test_calibrated_probes_round_trip_and_need_their_threshold(calibrated, tmp_path):
    probe, dev = calibrated
    path = tmp_path / "calibrated.safetensors"
    probe.save(path)
    loaded = AudioProbe.load(path)
    assert loaded.threshold == probe.threshold
    assert np.array_equal(loaded.predict_features(dev.x), probe.predict_features(dev.x))
    config = json.dumps(asdict(probe.config))
    probe.save_checkpoint(tmp_path / "cut.safetensors", {"config": config, "report": "{}"})
    with pytest.raises(ValueError, match="without its threshold"):
        AudioProbe.load(tmp_path / "cut.safetensors")


def test_operating_point_options_are_checked():
    with pytest.raises(ValueError, match="concern probe's operating point"):
        ProbeConfig(task="affect", max_false_resolved=0.01)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
        ProbeConfig(max_false_resolved=1.0)
    with pytest.raises(ValueError, match="assents_only trains a concern probe"):
        ProbeConfig(task="affect", assents_only=True)


def test_a_calibrated_probe_reports_its_dev_figures_for_a_listener_to_weigh():
    """``train_probe`` with an operating point adds the calibration split's shared assents to the
    report (``CALIBRATION_REPORT``): the rates ``probe_planner`` reads its verdicts at."""
    config = ProbeConfig(
        task="concern", assents_only=True, max_false_resolved=0.05, **{**SMALL, "max_scenarios": 2}
    )
    probe = train_probe(config)
    dev = build_data(config, "dev", RenderCache(make_renderer("espeak")), seed=config.seed + 2, assents=True)
    assert probe.report[CALIBRATION_REPORT] == per_class_accuracy(probe, dev)
    assert 1 - probe.report[CALIBRATION_REPORT]["unresolved"] <= config.max_false_resolved


def test_whole_turn_features_are_the_prosody_and_log_mel_of_the_turn_and_against_the_request():
    from agents.hear2act.audio_probe import turn_features
    from hear_gym.speech.features import pooled_log_mel, prosodic_features

    rng = np.random.default_rng(0)
    turn, request = (
        (0.2 * np.sin(np.linspace(0, f, 16_000)) + 0.01 * rng.standard_normal(16_000)).astype(np.float32)
        for f in (3_000, 2_000)
    )
    whole = turn_features("whole_turn_relative", turn, request)
    prosody, mel = prosodic_features(turn), pooled_log_mel(turn)
    expected = np.concatenate(
        [prosody, prosody - prosodic_features(request), mel, mel - pooled_log_mel(request)]
    )
    np.testing.assert_allclose(whole, expected, rtol=1e-6)
    np.testing.assert_array_equal(whole[: 2 * len(prosody)], turn_features("prosody_relative", turn, request))
    with pytest.raises(ValueError, match="whole_turn_relative features need the speaker's reference"):
        turn_features("whole_turn_relative", turn, None)


def test_heard_turns_give_the_probes_the_features_of_their_audio(tmp_path, monkeypatch):
    """A probe reading a rendered turn by its utterance (``predict_heard``) gets the feature row
    it would compute from the waveform, for every kind of features; once stored, no audio is
    read for it."""
    import pytest

    from agents.hear2act.audio_probe import FEATURE_KINDS, heard_features, turn_features
    from hear_gym.envs.hear2act.audio import user_turn_request
    from hear_gym.speech import cache as cache_module
    from hear_gym.speech import features
    from hear_gym.speech.cache import RenderCache
    from hear_gym.speech.renderers import EspeakRenderer

    monkeypatch.setenv("HEAR_GYM_CACHE", str(tmp_path))
    features._CACHE.clear()
    speaker = "budget_airline_tickets-00"
    turn = user_turn_request(speaker, "Okay, sounds good.", "lukewarm")
    request = user_turn_request(speaker, "I need a cheap flight to Denver next month.", "neutral")
    cache = RenderCache(EspeakRenderer())
    rows = {}
    for kind in FEATURE_KINDS:
        expected = turn_features(kind, cache.waveform(turn), cache.waveform(request))
        rows[kind] = heard_features(kind, cache.heard(turn), cache.heard(request))
        assert np.array_equal(rows[kind], expected), kind
    features._CACHE.clear()  # a new process: the rows are in the store only
    monkeypatch.setattr(cache_module.RenderCache, "waveform", lambda *a: pytest.fail("audio read"))
    fresh = RenderCache(EspeakRenderer())
    for kind in FEATURE_KINDS:
        assert np.array_equal(heard_features(kind, fresh.heard(turn), fresh.heard(request)), rows[kind])
