"""An evaluation's run folder: one writer at a time, duplicates named, strict JSON, no link
followed, git without optional locks."""

from __future__ import annotations

import json
import subprocess

import pytest
from lock_holder import lock_held_elsewhere
from typer.testing import CliRunner

from hear_gym.cli.app import app
from hear_gym.eval import provenance

runner = CliRunner()
ONE_EPISODE = ("--limit", "1", "--no-progress", "--feedback", "prosody", "--cell", "transcript_only")


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def _one_line_error(result) -> bool:
    """A refusal: one error line (Click adds its two usage lines to a bad option), no traceback."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    return result.exit_code != 0 and "Traceback" not in result.output and len(lines) <= 3


def test_a_second_writer_is_refused_and_the_folder_left_untouched(tmp_path):
    run = tmp_path / "run"
    assert invoke("eval", "--out", run, *ONE_EPISODE).exit_code == 0
    before = {
        name: (run / name).read_bytes() for name in ("results.jsonl", "metadata.json", "run_config.json")
    }
    with lock_held_elsewhere(run):
        for args in (("eval", "--out", run, *ONE_EPISODE), ("report", run)):
            result = invoke(*args)
            assert result.exit_code == 2 and "in use by another run" in result.output, args
            assert _one_line_error(result), result.output
    assert {name: (run / name).read_bytes() for name in before} == before
    assert invoke("eval", "--out", run, *ONE_EPISODE).exit_code == 0  # the lock died with its holder


def test_report_refuses_a_results_file_with_duplicate_keys(tmp_path):
    run = tmp_path / "run"
    assert (
        invoke("eval", "--out", run, "--limit", "2", "--no-progress", "--feedback", "prosody").exit_code == 0
    )
    results = run / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines + lines))  # what two interleaved runs wrote
    result = invoke("report", run)
    assert _one_line_error(result), result.output
    assert f"{len(lines)} duplicate episode record(s) over {len(lines)} key(s)" in result.output


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_undefined_aggregates_are_written_as_null(tmp_path):
    run = tmp_path / "onset"
    result = invoke("eval", "--env", "hear_gym/Onset-v0", "--out", run, "--limit", "1", "--no-progress")
    assert result.exit_code == 0, result.output
    metadata = _strict((run / "metadata.json").read_text())  # one group: some rates are 0/0
    points = [
        metric["point"]
        for cell in metadata["cells"].values()
        for group in cell["metrics"].values()
        for metric in group.values()
    ]
    assert None in points and all(p is None or isinstance(p, float | int) for p in points)
    _strict((run / "run_config.json").read_text())
    for line in (run / "results.jsonl").read_text().splitlines():
        _strict(line)


def test_a_non_finite_option_is_refused_before_it_reaches_the_run_config(tmp_path):
    result = invoke("eval", "--out", tmp_path / "run", *ONE_EPISODE, "--option", "turn_cost=NaN")
    assert _one_line_error(result) and "turn_cost must be a finite number" in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "name",
    [
        "results.jsonl",
        "metadata.json",
        "run_config.json",
        "metadata.json.tmp",
        "run_config.json.tmp",
        "tables.md",
        "figures",
        "figures/outcomes.png",
        "wandb",
    ],
)
def test_links_planted_in_the_run_folder_are_never_written_through(tmp_path, name, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    outside = tmp_path / "outside"
    outside.mkdir()
    precious = outside / "precious.txt"
    precious.write_text("")  # empty, so it also reads as a results file with nothing done yet
    run = tmp_path / "run"
    (run / name).parent.mkdir(parents=True)
    (run / name).symlink_to(outside if name in ("figures", "wandb") else precious)
    tables = run / "tables.md"
    results = [
        invoke("eval", "--out", run, *ONE_EPISODE, "--markdown", tables, "--wandb-project", "links"),
        invoke("report", run, "--markdown", tables),
    ]
    for result in results:  # done, or refused with one line after what was already printed
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert (result.exit_code, len(errors)) in ((0, 0), (2, 1)), result.output
        assert "Traceback" not in result.output
    assert precious.read_text() == ""
    assert [p.name for p in outside.iterdir()] == ["precious.txt"]


def test_provenance_runs_git_without_optional_locks(monkeypatch):
    commands = []
    real_run = subprocess.run

    def recording_run(args, **kwargs):
        commands.append(list(args))
        return real_run(args, **kwargs)

    monkeypatch.setattr(provenance.subprocess, "run", recording_run)
    provenance.git_commit()
    assert commands and all(cmd[:2] == ["git", "--no-optional-locks"] for cmd in commands)


def test_a_file_given_as_the_run_folder_is_one_line(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine\n")
    result = invoke("eval", "--out", taken, *ONE_EPISODE)
    assert _one_line_error(result) and f"--out {taken} is a file" in result.output, result.output
    assert taken.read_text() == "mine\n"


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_an_episode_record_that_is_not_strict_json_is_refused_unwritten(tmp_path, value):
    from hear_gym.eval.results import ResultsWriter

    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.write({"key": "a|0|0", "return": 1.0})
        with pytest.raises(ValueError, match=r"episode b\|0\|0: its record holds NaN or infinity"):
            writer.write({"key": "b|0|0", "return": value})
    assert [_strict(line)["key"] for line in path.read_text().splitlines()] == ["a|0|0"]
