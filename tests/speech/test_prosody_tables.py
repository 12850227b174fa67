"""Delivery plan tables: selection, caching, determinism, and the difficulty of the audio contrast.

The audit tests render a deterministic subset of assent turns with eSpeak and check that under
``paper`` no single scalar (fit on train scenarios) and only a combination of cues separates
genuine from reluctant acceptance on held-out scenarios, while under ``clear`` one scalar does.
"""

import hashlib
import json
import subprocess
import sys
from dataclasses import asdict

import gymnasium as gym
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hear_gym.envs.hear2act.assent_items import assent_items, render_pair
from hear_gym.envs.hear2act.audio import user_turn_request
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.user.realizer import SHARED_ACCEPTANCE_POOL
from hear_gym.envs.hear2act.user.states import SPOKEN_LABELS as DELIVERY_LABELS
from hear_gym.envs.hear2act.user.states import STATE_OF_LABEL
from hear_gym.speech.audit import (
    SCALAR_NAMES,
    ThresholdRule,
    acoustic_scalars,
    balanced_accuracy,
    best_single_scalar,
)
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import DEFAULT_PROSODY, PROSODY_TABLES, base_plans, plan_table
from hear_gym.speech.renderers import (
    EspeakRenderer,
    PraatRenderer,
    RenderRequest,
    cache_key,
    make_renderer,
    resample_to_16k,
)

TRAIN_SCENARIOS, TEST_SCENARIOS = 40, 32


def test_every_table_has_a_plan_for_every_label_and_paper_is_the_default():
    assert DEFAULT_PROSODY == "paper" and set(PROSODY_TABLES) == {"paper", "clear"}
    for name in PROSODY_TABLES:
        assert set(base_plans(name)) == set(DELIVERY_LABELS)
        assert all(abs(sum(p for _, p in dist) - 1) < 1e-9 for dist in plan_table(name).contours.values())
    assert RenderRequest("Sure.", "warm", "m1").prosody == "paper"


def test_unknown_table_names_get_a_clear_error():
    message = r"unknown prosody plan table 'subtle'; tables: \['paper', 'clear'\]"
    with pytest.raises(ValueError, match=message):
        RenderRequest("Sure.", "warm", "m1", prosody="subtle")
    with pytest.raises(ValueError, match=message):
        gym.make("hear_gym/Hear2Act-v0", prosody="subtle")
    with pytest.raises(ValueError, match=message):
        plan_table("subtle")


def test_the_table_and_the_speaker_are_part_of_the_cache_key_and_the_plan():
    renderer = EspeakRenderer()
    paper = user_turn_request("budget_airline_tickets-00", "Sure, that works.", "warm", "paper")
    clear = user_turn_request("budget_airline_tickets-00", "Sure, that works.", "warm", "clear")
    other = user_turn_request("budget_airline_tickets-01", "Sure, that works.", "warm", "paper")
    assert len({cache_key(renderer, r) for r in (paper, clear, other)}) == 3
    assert paper.plan() == paper.plan() and len({paper.plan(), clear.plan(), other.plan()}) == 3
    assert renderer.describe(paper)["prosody"] == "paper"


@pytest.mark.parametrize("prosody", PROSODY_TABLES)
@pytest.mark.parametrize("renderer", [EspeakRenderer(), PraatRenderer()], ids=lambda r: r.name)
def test_same_request_same_audio(renderer, prosody):
    request = user_turn_request("budget_airline_tickets-00", "Okay, sounds good.", "hesitant", prosody)
    first, second = renderer.render(request), renderer.render(request)
    assert np.array_equal(first.waveform, second.waveform) and first.plan == second.plan


def test_rendering_does_not_depend_on_history_or_memory_layout():
    # soxr, the earlier resampler, changed about 1 in 80 long utterances on a second rendering
    # (2 of these 96 opening requests, one run); it did not depend on the input's alignment alone
    requests = [user_turn_request(s.scenario_id, s.request, "neutral") for s in scenarios_for("dev")]
    first = [EspeakRenderer().render(r).waveform for r in requests]
    assert all(
        np.array_equal(a, EspeakRenderer().render(r).waveform) for a, r in zip(first, requests, strict=True)
    )
    x = np.random.default_rng(0).integers(-3000, 3000, 20_000).astype(np.float64)
    shifted = np.zeros(len(x) + 3)[3:]
    shifted[:] = x
    assert np.array_equal(resample_to_16k(x), resample_to_16k(shifted))


def test_resampling_keeps_level_and_duration():
    tone = 1000 * np.sin(2 * np.pi * 440 * np.arange(22_050) / 22_050)
    out = resample_to_16k(tone)
    assert len(out) == 16_000 and abs(out[2000:-2000].std() / tone.std() - 1) < 0.01


def test_the_opening_request_answers_nobody_so_it_has_no_lead_pause():
    # VoiceGate's neutral segments (speaker = voice) rely on it too: no silence before speech
    for prosody in PROSODY_TABLES:
        requests = [
            user_turn_request(s, "I need a flight.", "neutral", prosody)
            for s in ("budget_airline_tickets-00", "meditation_apps-03")
        ]
        requests.append(RenderRequest("I need a flight.", "neutral", "f2", prosody=prosody))
        assert all(r.plan().lead_pause_ms == 0 for r in requests)


def test_the_env_renders_with_the_chosen_table():
    env = gym.make(
        "hear_gym/Hear2Act-v0", access="A+T", prosody="clear", item_ids=["budget_airline_tickets-00"]
    )
    obs, info = env.reset(seed=0)
    record = info["turn_record"]
    expected = (
        EspeakRenderer()
        .render(
            user_turn_request(
                "budget_airline_tickets-00", record["user_text"], record["delivery_label"], "clear"
            )
        )
        .waveform
    )
    assert np.array_equal(obs["audio"][: int(obs["audio_length"][0])], expected)


def test_threshold_rule_finds_the_best_cut_in_either_direction():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    up, down = ThresholdRule.fit(x, x > 3.5), ThresholdRule.fit(x, x < 2.5)
    assert up.direction == 1 and 3 < up.threshold < 4 and balanced_accuracy(x > 3.5, up.predict(x)) == 1
    assert down.direction == -1 and 2 < down.threshold < 3 and down.predict(x).sum() == 2


@pytest.fixture(scope="module", params=["espeak", "neural"])
def audits(request):
    """prosody -> (x_train, y_train, x_test, y_test) on a fixed subset, per renderer (the neural
    voice must keep the paper table's calibration as eSpeak does)."""
    train = assent_items("train", seed=1, max_scenarios=TRAIN_SCENARIOS)
    test = assent_items("test", seed=2, max_scenarios=TEST_SCENARIOS)
    cache = RenderCache(make_renderer(request.param))
    out = {}
    for prosody in PROSODY_TABLES:
        x = [
            np.array([acoustic_scalars(*render_pair(i, cache, prosody)) for i in items])
            for items in (train, test)
        ]
        y = [np.array([i.resolved for i in items]) for items in (train, test)]
        out[prosody] = (x[0], y[0], x[1], y[1])
    return out


def train_selected_scalar(x_train, y_train, x_test, y_test) -> dict:
    """The single scalar with the best train accuracy, and its held-out accuracy."""
    return max(best_single_scalar(x_train, y_train, x_test, y_test), key=lambda r: r["train"])


@pytest.mark.slow
def test_paper_no_single_scalar_decides_but_all_cues_together_do(audits):
    x_train, y_train, x_test, y_test = audits["paper"]
    assert x_train.shape[1] == len(SCALAR_NAMES) and y_test.sum() == TEST_SCENARIOS
    best = train_selected_scalar(x_train, y_train, x_test, y_test)
    assert best["test"] <= 0.80, best  # the full audit: benchmarks/hear2act/speech_validation.md
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, class_weight="balanced"))
    accuracy = balanced_accuracy(y_test, probe.fit(x_train, y_train).predict(x_test))
    assert accuracy >= 0.75, accuracy


@pytest.mark.slow
def test_clear_is_separable_by_one_scalar(audits):
    best = train_selected_scalar(*audits["clear"])
    assert best["test"] >= 0.95, best


CROSS_PROCESS = """
import hashlib, json, sys
from hear_gym.speech.renderers import EspeakRenderer, RenderRequest
requests = [RenderRequest(**r) for r in json.loads(sys.stdin.read())]
print(json.dumps([hashlib.sha256(EspeakRenderer().render(r).waveform.tobytes()).hexdigest() for r in requests]))
"""


def test_same_audio_across_processes_for_hundreds_of_utterances():
    # The utterance the issue found varying (3 hashes over 6 processes with soxr), plus every
    # delivery label over the dev scenarios' opening requests and the shared assent pool.
    requests = [
        RenderRequest(
            "Well, I guess what I really need is mechanics who know what they're doing.",
            "frustrated",
            "m4",
            speaker="auto_mechanic_services-03",
        )
    ]
    labels = sorted(STATE_OF_LABEL)
    for i, s in enumerate(scenarios_for("dev")):
        requests.append(user_turn_request(s.scenario_id, s.request, "neutral"))
        for j, text in enumerate(SHARED_ACCEPTANCE_POOL):
            requests.append(user_turn_request(s.scenario_id, text, labels[(i + j) % len(labels)]))
            if len(requests) >= 300:
                break
        if len(requests) >= 300:
            break
    here = [hashlib.sha256(EspeakRenderer().render(r).waveform.tobytes()).hexdigest() for r in requests]
    payload = json.dumps([asdict(r) for r in requests])
    for _ in range(2):
        there = subprocess.run(
            [sys.executable, "-c", CROSS_PROCESS], input=payload, capture_output=True, text=True, check=True
        ).stdout
        assert json.loads(there) == here
