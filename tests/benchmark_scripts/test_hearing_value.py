"""The hearing-value study's plumbing (``benchmarks/hear2act/hearing_value.py``) on a tiny grid:
every ear is paired against ``planner@T`` on the same scenarios, a perfect resolved-reader never
does worse than no ear, and the figure and JSON are written (the full grid is the study's run)."""

import json

from benchmarks.hear2act import hearing_value
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for


def test_a_tiny_grid_reports_every_ear_against_planner_at_t(tmp_path, monkeypatch):
    monkeypatch.setattr(hearing_value, "OUT", tmp_path / "hearing_value")
    monkeypatch.setattr(hearing_value, "FIGURE", tmp_path / "hearing_value.png")
    monkeypatch.setattr(hearing_value, "TURN_COSTS", (0.15,))
    monkeypatch.setattr(hearing_value, "RECALLS", (0.0, 1.0))
    monkeypatch.setattr(hearing_value, "FALSE_RESOLVED", (0.0,))
    test_ids = tuple(s.scenario_id for s in scenarios_for("test"))[:6]
    monkeypatch.setattr(
        hearing_value,
        "scenarios_for",
        lambda split: [s for s in scenarios_for(split) if s.scenario_id in test_ids],
    )
    report = hearing_value.main(rollouts=1)
    figures = report["turn_costs"]["0.15"]
    assert set(figures["ears"]) == {"0.0 0.0", "1.0 0.0"}
    deaf, perfect = figures["ears"]["0.0 0.0"]["value"], figures["ears"]["1.0 0.0"]["value"]
    assert deaf["point"] == deaf["low"] == deaf["high"] == 0.0  # hears nothing: planner@T's dialogues
    assert perfect["point"] >= 0.0 and figures["ceiling"]["point"] >= perfect["point"]
    assert (tmp_path / "hearing_value.png").stat().st_size > 0
    assert json.loads((tmp_path / "hearing_value.json").read_text())["scenarios"] == 6
