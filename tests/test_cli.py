import json

import pytest
from typer.testing import CliRunner

from hear_gym.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], ["scenarios"], ["scenarios", "export"], ["eval"], ["report"]])
def test_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0 and "Usage" in result.output


def test_scenarios_commands(tmp_path):
    out = tmp_path / "bank.jsonl"
    assert invoke("scenarios", "export", "--out", str(out)).exit_code == 0
    assert len(out.read_text().splitlines()) == 480
    assert invoke("scenarios", "export", "--out", str(out), "--split", "test").exit_code == 0
    assert len(out.read_text().splitlines()) == 96
    listing = invoke("scenarios", "list", "--split", "test", "--domain", "budget_airline_tickets")
    assert listing.exit_code == 0 and listing.output.count("budget_airline_tickets-") == 2
    shown = invoke("scenarios", "show", "budget_airline_tickets-00")
    assert json.loads(shown.output)["gold_option"] >= 1
    missing = invoke("scenarios", "show", "nope-00")
    assert missing.exit_code == 2 and "unknown scenario id" in missing.output


def test_eval_then_report(tmp_path):
    run_dir = tmp_path / "run"
    result = invoke("eval", "--out", str(run_dir), "--limit", "3", "--no-progress",
                    "--cell", "transcript_only", "--cell", "state_aware@T+S")
    assert result.exit_code == 0, result.output
    assert "1st%" in result.output and (run_dir / "metadata.json").exists()
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 12
    md = tmp_path / "tables.md"
    report = invoke("report", str(run_dir), "--markdown", str(md))
    assert report.exit_code == 0 and "| feedback |" in md.read_text()


def test_eval_rejects_unknown_agents_and_bad_folders(tmp_path):
    result = invoke("eval", "--out", str(tmp_path), "--cell", "oracle@T")
    assert result.exit_code == 2 and "unknown agent 'oracle'" in result.output
    result = invoke("report", str(tmp_path / "nothing"))
    assert result.exit_code == 2 and "not a hear_gym run folder" in result.output
