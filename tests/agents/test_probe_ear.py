"""A trained concern probe as the belief planner's ear: its score calibrated into likelihoods on
the dev split's shared assents, heard on shared assents only, the same through the env (T+S^,
``LikelihoodInferrer``) as run by the agent on the A+T audio (``ProbeEar``)."""

import math
from dataclasses import replace
from functools import partial
from importlib.metadata import entry_points

import numpy as np
import pytest

from agents.hear2act.audio_probe import AudioProbe, ProbeConfig, build_data, fit
from agents.hear2act.belief_planner import BeliefPlannerAgent
from agents.hear2act.probe_ear import (
    LIKELIHOOD_REPORT,
    InferredEar,
    LikelihoodInferrer,
    ProbeEar,
    calibrate_likelihoods,
)
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import SAMPLE_RATE, make_renderer

SMALL = dict(max_scenarios=4, epochs=150, prosody="clear")  # as test_probe_planner.py
DEV = tuple(s.scenario_id for s in scenarios_for("dev"))[:6]
ASSENT = "User: Okay, sounds good."


@pytest.fixture(scope="module")
def probe():
    cache = RenderCache(make_renderer("espeak"))
    config = ProbeConfig(task="concern", features="prosody", assents_only=True, **SMALL)
    trained = fit(config, build_data(config, "train", cache, seed=0, assents=True))
    calibrate_likelihoods(trained, build_data(config, "dev", cache, seed=2, assents=True))
    return trained


def test_calibration_points_the_right_way_and_bins_each_class(probe):
    calibration = probe.report[LIKELIHOOD_REPORT]
    assert calibration["slope"] > 0  # a higher resolved score is more likely genuine
    for key in ("cdf_resolved", "cdf_unresolved"):
        assert (
            calibration[key] == sorted(calibration[key])
            and 0 <= calibration[key][0] <= calibration[key][-1] <= 1
        )
    # genuine acceptances' ratios lie above the reluctant ones'
    assert calibration["cdf_resolved"][0] < calibration["cdf_unresolved"][0]
    channel = ProbeEar(probe).lookahead()
    for grade in range(4):
        assert math.isclose(sum(row[grade] for row in channel.probabilities), 1.0)


def test_the_inferrer_writes_what_the_ear_reads_and_only_on_shared_assents(probe):
    inferrer, ear = LikelihoodInferrer(probe), InferredEar(probe)
    rng = np.random.default_rng(0)
    wave = (0.1 * rng.standard_normal(SAMPLE_RATE)).astype(np.float32)
    wave += 0.3 * np.sin(np.linspace(0, 2000, SAMPLE_RATE)).astype(np.float32)
    heard = ear.hear({"inferred_state": inferrer.infer(wave, SAMPLE_RATE, ASSENT)})
    direct = ProbeEar(probe).hear(
        {"audio": wave, "audio_length": np.array([len(wave)]), "transcript": ASSENT}
    )
    assert heard == pytest.approx(direct, rel=1e-3)
    elsewhere = "User: Sorry, but I can't compromise on this: I need a direct flight."
    assert ear.hear({"inferred_state": inferrer.infer(wave, SAMPLE_RATE, elsewhere)}) == (1.0,) * 4
    with pytest.raises(ValueError, match="not a LikelihoodInferrer sentence"):
        ear.hear({"inferred_state": "The user sounds genuinely satisfied."})


def test_under_a_t_it_plays_as_under_t_s_hat_with_the_same_probe(probe, tmp_path):
    options = dict(turn_cost=0.1, reward="success", prosody="clear")
    inferred = partial(BeliefPlannerAgent, InferredEar(probe))
    config = run_config([cell("belief_planner", "T+S^", "prosody")], DEV, rollouts=2, **options)
    objects = {"state_inferrer": LikelihoodInferrer(probe)}
    evaluate(tmp_path / "t_s_hat", config, {"belief_planner": inferred}, progress=False, env_objects=objects)
    config = run_config([cell("belief_planner", "A+T", "prosody")], DEV, rollouts=2, **options)
    evaluate(
        tmp_path / "a_t", config, {"belief_planner": partial(BeliefPlannerAgent, ProbeEar(probe))}, False
    )

    def played(folder):
        return sorted(
            (r["item_id"], r["rollout"], str(r["turns"])) for r in read_results(folder / "results.jsonl")
        )

    assert played(tmp_path / "a_t") == played(tmp_path / "t_s_hat")


def test_probes_it_cannot_hear_are_refused(probe):
    relative = AudioProbe(
        replace(probe.config, features="prosody_relative"), probe.model, probe.mean, probe.std
    )
    relative.report = probe.report
    with pytest.raises(ValueError, match="opening request"):
        ProbeEar(relative)
    uncalibrated = AudioProbe(probe.config, probe.model, probe.mean, probe.std)
    with pytest.raises(ValueError, match="calibrate_likelihoods"):
        ProbeEar(uncalibrated)


def test_it_is_registered_and_loads_its_ear_from_a_checkpoint(probe, tmp_path):
    found = {ep.name: ep.value for ep in entry_points(group="hear_gym.agents.hear2act")}
    assert found["belief_planner"] == "agents.hear2act.belief_planner:BeliefPlannerAgent"
    path = tmp_path / "probe.safetensors"
    probe.save(path)
    agent = BeliefPlannerAgent.from_checkpoint(path)
    assert isinstance(agent.ear, ProbeEar) and agent.required_access == ("A+T",)
    assert agent.ear.calibration == probe.report[LIKELIHOOD_REPORT]
