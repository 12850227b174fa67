"""``hear-gym eval|listen|ambiguity counts`` for Ambiguity: a small run, WAVs of a minimal pair's
two readings, the counts, and clear errors for unknown options."""

import json

from typer.testing import CliRunner

from hear_gym.cli.app import app

ENV = ["--env", "hear_gym/Ambiguity-v0"]


def test_eval_runs_cells_on_the_chosen_phenomena(tmp_path):
    args = ["eval", *ENV, "--out", str(tmp_path / "run"), "--cell", "first_option@T-nopunct", "--limit", "20"]
    result = CliRunner().invoke(app, [*args, "--option", "language=en", "--no-progress"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert records and all(r["language"] == "en" for r in records)
    bad = CliRunner().invoke(app, [*args, "--option", "phenomenon=prosody"])
    assert bad.exit_code != 0 and "unknown phenomenon" in bad.output


def test_listen_writes_both_readings_and_counts_prints_the_papers(tmp_path):
    result = CliRunner().invoke(
        app, ["listen", "phonological-en-stress-test-000", *ENV, "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "phonological-en-stress-test-000"
    assert len(list(folder.glob("*.wav"))) == 2 and (folder / "episode.json").exists()
    counts = CliRunner().invoke(app, ["ambiguity", "counts"])
    assert counts.exit_code == 0 and json.loads(counts.output)["test"]["coreference-en"] == 540
