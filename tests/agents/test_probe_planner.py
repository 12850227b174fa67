"""``probe_planner@A+T``: the planner hearing the user through a concern probe it runs on the A+T
audio must play exactly as the planner reading the same probe's sentence under T+S^ (the env
running the probe), with the probe's calibration-split figures as its channel."""

import json
from dataclasses import replace
from functools import partial
from importlib.metadata import entry_points

import pytest
import typer
from typer.testing import CliRunner

from agents.hear2act.audio_probe import (
    CALIBRATION_REPORT,
    AudioProbe,
    ConcernInferrer,
    ProbeConfig,
    build_data,
    calibrate,
    fit,
    per_class_accuracy,
)
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.probe_planner import ProbePlannerAgent, channel_rates
from hear_gym.cli.app import app
from hear_gym.core.run_config import RunConfig
from hear_gym.envs.hear2act.cli import _through_state_probe
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import make_renderer

# The clear plan table and 4 training scenarios, as in test_audio_probe.py: a probe that hears
# something, so that its verdicts steer the planner.
SMALL = dict(max_scenarios=4, epochs=150, prosody="clear")
DEV = tuple(s.scenario_id for s in scenarios_for("dev"))[:6]


@pytest.fixture(scope="module")
def probe():
    cache = RenderCache(make_renderer("espeak"))
    config = ProbeConfig(
        task="concern", features="prosody", assents_only=True, max_false_resolved=0.1, **SMALL
    )
    trained = fit(config, build_data(config, "train", cache, seed=0, assents=True))
    dev = build_data(config, "dev", cache, seed=2, assents=True)
    trained.threshold = calibrate(trained, dev)
    trained.report = {CALIBRATION_REPORT: per_class_accuracy(trained, dev)}
    return trained


def dialogues(folder, agent):
    records = sorted(read_results(folder / "results.jsonl"), key=lambda r: (r["item_id"], r["rollout"]))
    return [
        (r["item_id"], [t["action"] for t in r["turns"]], r["return"]) for r in records if r["agent"] == agent
    ]


def test_hearing_the_audio_plays_as_the_planner_reading_the_probe_under_t_s_hat(probe, tmp_path):
    recall, false_resolved = channel_rates(probe)
    agents = {
        "planner": partial(PlannerAgent, state_recall=recall, state_false_resolved=false_resolved),
        "probe_planner": partial(ProbePlannerAgent, probe),
    }
    options = dict(turn_cost=0.1, reward="success", prosody="clear")
    config = run_config([cell("planner", "T+S^", "prosody")], DEV, rollouts=2, **options)
    evaluate(
        tmp_path / "t_s_hat",
        config,
        agents,
        progress=False,
        env_objects={"state_inferrer": ConcernInferrer(probe)},
    )
    config = run_config([cell("probe_planner", "A+T", "prosody")], DEV, rollouts=2, **options)
    evaluate(tmp_path / "a_t", config, agents, progress=False)
    heard = dialogues(tmp_path / "a_t", "probe_planner")
    assert heard == dialogues(tmp_path / "t_s_hat", "planner")
    assert len(heard) == 2 * len(DEV)


def test_the_channel_is_the_probes_calibration_split_figures(probe, tmp_path):
    figures = probe.report[CALIBRATION_REPORT]
    assert channel_rates(probe) == (figures["resolved"], 1.0 - figures["unresolved"])
    channel = ProbePlannerAgent(probe).planner.channel
    assert (channel.recall, channel.false_resolved) == channel_rates(probe)
    path = tmp_path / "probe.safetensors"
    probe.save(path)
    assert ProbePlannerAgent.from_checkpoint(path).planner.channel == channel
    silent = AudioProbe(probe.config, probe.model, probe.mean, probe.std)  # no calibration figures
    with pytest.raises(ValueError, match="--max-false-resolved"):
        ProbePlannerAgent(silent)


def test_it_plans_at_the_cost_the_run_sets_and_needs_the_audio(probe):
    agent = ProbePlannerAgent(probe)
    agent.configure({"turn_cost": 0.15, "feedback": "explicit"})
    assert agent.planner.turn_cost == 0.15 and agent.planner.feedback.value == "explicit"
    with pytest.raises(KeyError, match=r"needs the user's audio \(access A\+T\)"):
        agent.act({"turn": 1, "transcript": "User: hi"})


def test_a_probe_that_needs_the_request_as_reference_is_refused(probe):
    relative = AudioProbe(
        replace(probe.config, features="prosody_relative"), probe.model, probe.mean, probe.std
    )
    relative.report = probe.report
    with pytest.raises(ValueError, match="--features prosody or logmel"):
        ProbePlannerAgent(relative)


def test_it_is_registered_as_a_hear2act_agent():
    found = {ep.name: ep.value for ep in entry_points(group="hear_gym.agents.hear2act")}
    assert found["probe_planner"] == "agents.hear2act.probe_planner:ProbePlannerAgent"


def test_hear_gym_eval_plays_planner_t_s_hat_at_the_probes_dev_rates(probe, tmp_path):
    """``hear-gym eval --cell planner@T+S^`` weighs the probe as the listening-value benchmark
    does (its calibration-split rates), not as an exact channel: the CLI's dialogues are those of
    the planner built with ``channel_rates``; and the planner under T+SER may not share them."""
    inferrer = ConcernInferrer(probe)
    built = PlannerAgent.through_state_inferrer(inferrer)()
    assert (built.channel.recall, built.channel.false_resolved) == channel_rates(probe)
    assert PlannerAgent.through_state_inferrer(_NoProbe()) is PlannerAgent
    path = tmp_path / "probe.safetensors"
    probe.save(path)
    flags = ("--limit", "2", "--no-progress", "--feedback", "prosody", "--option", "turn_cost=0.1")
    cli = CliRunner().invoke(
        app,
        [
            "eval",
            "--out",
            str(tmp_path / "cli"),
            "--cell",
            "planner@T+S^",
            "--state-probe",
            str(path),
            *flags,
        ],
        catch_exceptions=False,
    )
    assert cli.exit_code == 0, cli.output
    config = RunConfig.from_json(json.loads((tmp_path / "cli" / "run_config.json").read_text()))
    recall, false_resolved = channel_rates(probe)
    rated = partial(PlannerAgent, state_recall=recall, state_false_resolved=false_resolved)
    evaluate(
        tmp_path / "rated",
        config,
        {"planner": rated},
        progress=False,
        env_objects={"state_inferrer": inferrer},
    )
    assert dialogues(tmp_path / "cli", "planner") == dialogues(tmp_path / "rated", "planner")
    cells = [cell("planner", "T+S^", "prosody"), cell("planner", "T+SER", "prosody")]
    with pytest.raises(typer.BadParameter, match="T\\+SER in its own folder"):
        _through_state_probe("planner", PlannerAgent, cells, {"state_inferrer": inferrer})


class _NoProbe:
    def infer(self, waveform, sample_rate, transcript, reference=None) -> str:
        return ConcernInferrer.SENTENCES["resolved"]
