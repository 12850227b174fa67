"""``hear-gym render`` as a prewarm: the plan's size first, then a progress bar over workers."""

from __future__ import annotations

from typer.testing import CliRunner

from hear_gym.cli.app import app
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.utterances import possible_turns

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_render_help_names_the_prewarm_options():
    result = invoke("render", "--help")
    assert result.exit_code == 0
    for flag in ("--turns", "--workers", "--no-audio", "--no-features", "--dry-run", "--limit"):
        assert flag in result.output, flag


def test_a_dry_run_of_every_turn_says_its_size_and_renders_nothing(tmp_path):
    cache = tmp_path / "cache"
    result = invoke(
        "render", "--cache-dir", cache, "--split", "dev", "--limit", 1, "--turns", "all", "--feedback", "prosody",
        "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    n = len(possible_turns(scenarios_for("dev")[0], "prosody"))
    assert f"{n:,} utterances" in result.output and "MiB of audio" in result.output
    assert "dry run: nothing rendered" in result.output and not cache.exists()


def test_a_tiny_prewarm_renders_in_parallel_with_a_progress_bar(tmp_path):
    cache = tmp_path / "cache"
    args = ("render", "--cache-dir", cache, "--split", "dev", "--limit", 2, "--cell", "transcript_only@T")
    result = invoke(*args, "--feedback", "prosody", "--workers", 2)
    assert result.exit_code == 0, result.output
    assert "rendering (espeak, prosody paper)" in result.output  # the bar, drawn once done
    rendered = len(list(cache.rglob("*.f32")))
    assert rendered > 4 and f"{rendered} utterances rendered, 0 already cached" in result.output
    result = invoke(*args, "--feedback", "prosody", "--workers", 1)  # resumes: every turn is kept
    assert f"0 utterances rendered, {rendered} already cached, 0 measured" in result.output


def test_cells_that_must_hear_to_play_cannot_be_planned(tmp_path):
    result = invoke(
        "render", "--cache-dir", tmp_path, "--split", "dev", "--limit", 1, "--cell", "state_aware@T+SER"
    )
    assert result.exit_code == 2 and "--turns all" in result.output


def test_other_families_refuse_the_hear2act_prewarm_options(tmp_path):
    result = invoke("render", "--env", "hear_gym/VoiceGate-v0", "--cache-dir", tmp_path, "--workers", 2)
    assert result.exit_code == 2 and "workers" in result.output
