import json

import numpy as np
import pytest
from typer.testing import CliRunner

from hear_gym.cli.app import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], ["scenarios"], ["scenarios", "export"], ["eval"], ["report"]])
def test_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0 and "Usage" in result.output


def _commands(group, path=()):
    """Every command path of a Click group, the group itself included."""
    import click

    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from (
            _commands(command, (*path, name)) if isinstance(command, click.Group) else [(*path, name)]
        )


def test_every_help_fits_80_columns():
    import typer

    for path in _commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        assert result.exit_code == 0, path
        wide = [line for line in result.output.splitlines() if len(line) > 80]
        assert not wide, (path, wide)
        assert "\u2026" not in result.output, path  # no option name cut short


def test_version_flag():
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"hear-gym {version('hear-gym')}"


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
    result = invoke(
        "eval",
        "--out",
        str(run_dir),
        "--limit",
        "3",
        "--no-progress",
        "--cell",
        "transcript_only",
        "--cell",
        "state_aware@T+S",
    )
    assert result.exit_code == 0, result.output
    assert "1st%" in result.output and (run_dir / "metadata.json").exists()
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 12
    md = tmp_path / "tables.md"
    report = invoke("report", str(run_dir), "--markdown", str(md))
    assert report.exit_code == 0 and "| feedback |" in md.read_text()
    for name in ("outcomes.png", "action_shift.png"):
        figure = run_dir / "figures" / name
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000


def test_eval_rejects_unknown_agents_and_bad_folders(tmp_path):
    result = invoke("eval", "--out", str(tmp_path), "--cell", "oracle@T")
    assert result.exit_code == 2 and "unknown agent 'oracle'" in result.output
    result = invoke("report", str(tmp_path / "nothing"))
    assert result.exit_code == 2 and "not a hear_gym run folder" in result.output


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "spec,message",
    [
        ("openai:http://127.0.0.1:{free_port}/v1@some-model", "cannot reach the chat server"),
        ("hf:no-such-org/no-such-model", "neither a local folder nor in the Hugging Face cache"),
        ("hf-audio:./no/such/folder", "neither a local folder nor in the Hugging Face cache"),
        ("gpt:whatever", "must be one of"),
    ],
)
def test_llm_client_problems_are_one_line_and_leave_nothing_behind(tmp_path, spec, message):
    # the port is chosen when the test runs, so the test ids stay the same from one collection to the next
    spec = spec.replace("{free_port}", str(_free_port()))
    run_dir = tmp_path / "run"
    result = invoke("eval", "--out", str(run_dir), "--cell", "llm@T", "--llm-client", spec, "--limit", "1")
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not run_dir.exists()


def test_probe_conditions_name_the_missing_flag(tmp_path):
    for cell, flag in (("state_aware@T+S^", "--state-probe"), ("state_aware@T+SER", "--affect-probe")):
        result = invoke("eval", "--out", str(tmp_path / "run"), "--cell", cell, "--limit", "1")
        assert result.exit_code == 2 and flag in result.output and "state_inferrer" not in result.output
    assert not (tmp_path / "run").exists()


def test_garbled_run_config_is_named(tmp_path):
    run_dir = tmp_path / "run"
    assert invoke("eval", "--out", str(run_dir), "--limit", "1", "--no-progress").exit_code == 0
    (run_dir / "run_config.json").write_text("{not json")
    result = invoke("eval", "--out", str(run_dir), "--limit", "1", "--no-progress")
    assert result.exit_code == 2 and "run_config.json" in result.output and "Traceback" not in result.output
    assert (run_dir / "results.jsonl").exists()  # results already written are kept


def test_ray_backend_without_ray_is_refused_up_front(tmp_path):
    try:
        import ray  # noqa: F401

        pytest.skip("Ray is installed here")
    except ImportError:
        pass
    for workers in ("1", "2"):
        result = invoke(
            "eval",
            "--out",
            str(tmp_path / "run"),
            "--backend",
            "ray",
            "--workers",
            workers,
            "--limit",
            "2",
            "--no-progress",
        )
        assert result.exit_code == 2 and "needs Ray" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_listen_writes_a_dialogue_in_every_renderer_side_by_side_and_a_label_gallery(tmp_path):
    import soundfile as sf

    out = tmp_path / "dialogue"
    pick = ("--option", "renderers=espeak", "--option", "renderers=praat")  # neural's cost stays out
    result = invoke("listen", "budget_airline_tickets-00", "--out", str(out), "--renderer", "praat", *pick)
    assert result.exit_code == 0, result.output
    wavs = {name: sorted(out.glob(f"turn_*_user.{name}.wav")) for name in ("espeak", "praat")}
    sidecar = (out / "dialogue.txt").read_text()
    turns = sidecar.count("USER (")
    assert turns >= 3 and all(len(w) == turns for w in wavs.values()) and "delivery" in sidecar
    assert "played with renderer praat" in sidecar
    page = (out / "index.html").read_text()
    assert page.count("<audio") == 2 * turns and "<th>espeak</th><th>praat</th>" in page
    for first, second in zip(wavs["espeak"], wavs["praat"], strict=True):  # the same words, two voices
        a, rate = sf.read(first)
        b, _ = sf.read(second)
        assert rate == 16_000 and len(a) > rate // 2 and len(b) > rate // 2
        assert abs(len(a) - len(b)) < 0.5 * max(len(a), len(b)) and not np.array_equal(a, b)
    bad = invoke(
        "listen", "budget_airline_tickets-00", "--out", str(tmp_path / "y"), "--option", "renderers=nope"
    )
    assert bad.exit_code == 2 and "unknown renderer" in bad.output

    result = invoke("listen", "--out", str(tmp_path / "labels"), "--every-label", "Okay, sounds good.")
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "labels").glob("*.wav"))) == 14
    assert "hesitant.wav" in (tmp_path / "labels" / "labels.txt").read_text()
    assert invoke("listen", "--out", str(tmp_path / "x")).exit_code == 2
    assert invoke("listen", "nope-00", "--out", str(tmp_path / "x")).exit_code == 2


@pytest.mark.slow  # three renderers' worth of a dialogue
def test_listen_on_neural_writes_the_dialogue_in_every_renderer(tmp_path):
    import soundfile as sf

    out = tmp_path / "dialogue"
    result = invoke("listen", "budget_airline_tickets-00", "--renderer", "neural", "--out", str(out))
    assert result.exit_code == 0, result.output
    sidecar = (out / "dialogue.txt").read_text()
    turns = sorted(out.glob("turn_*_user.neural.wav"))
    assert len(turns) >= 3 and "played with renderer neural" in sidecar
    for turn in turns:
        stem = turn.name.removesuffix(".neural.wav")
        voices = {name: sf.read(out / f"{stem}.{name}.wav")[0] for name in ("neural", "espeak", "praat")}
        assert f"{stem}.praat.wav" in sidecar
        assert len({len(v) for v in voices.values()}) == 3  # three voices, not one file thrice
    assert (out / "index.html").read_text().count("<audio") == 3 * len(turns)


def test_render_fills_the_disk_cache_for_eval(tmp_path):
    cache = tmp_path / "cache"
    result = invoke(
        "render",
        "--cache-dir",
        str(cache),
        "--split",
        "dev",
        "--cell",
        "state_aware@T+S",
        "--feedback",
        "prosody",
        "--no-features",  # the audio an eval reads (features: tests/cli/test_render_prewarm.py)
    )
    assert result.exit_code == 0, result.output
    first = len(list(cache.rglob("*.f32")))
    assert first > 96
    result = invoke(
        "render",
        "--cache-dir",
        str(cache),
        "--split",
        "dev",
        "--cell",
        "state_aware@T+S",
        "--feedback",
        "prosody",
        "--no-features",
    )
    assert "0 utterances rendered" in result.output and len(list(cache.rglob("*.f32"))) == first


def test_train_a_probe_then_evaluate_with_it(tmp_path):
    probe = tmp_path / "probes" / "new" / "concern.safetensors"  # folders that do not exist yet
    result = invoke("train", "probe", "--out", str(probe), "--max-scenarios", "3")
    assert result.exit_code == 0, result.output
    assert probe.exists() and "balanced" in result.output
    run_dir = tmp_path / "run"
    result = invoke(
        "eval",
        "--out",
        str(run_dir),
        "--limit",
        "2",
        "--no-progress",
        "--feedback",
        "prosody",
        "--cell",
        "transcript_only",
        "--cell",
        "state_aware@T+S^",
        "--state-probe",
        str(probe),
    )
    assert result.exit_code == 0, result.output
    config = json.loads((run_dir / "run_config.json").read_text())
    assert dict(map(tuple, config["plugins"]))["state_inferrer"].startswith("concern.safetensors@sha256:")
    missing = invoke(
        "eval", "--out", str(tmp_path / "x"), "--state-probe", str(tmp_path / "none.safetensors")
    )
    assert missing.exit_code == 2 and "no probe checkpoint" in missing.output


def test_a_calibrated_assent_probe_drives_the_listener_with_a_safety_net(tmp_path):
    probe = tmp_path / "assents.safetensors"
    flags = ("--max-scenarios", "3", "--assents-only", "--max-false-resolved", "0.02")
    result = invoke("train", "probe", "--out", str(probe), *flags)
    assert result.exit_code == 0, result.output
    assert "calibrated on dev" in result.output and "test assents" in result.output
    run = ("--limit", "2", "--no-progress", "--feedback", "prosody", "--state-probe", str(probe))
    result = invoke("eval", "--out", str(tmp_path / "run"), "--cell", "ask_unless_resolved@T+S^", *run)
    assert result.exit_code == 0, result.output
    bad = invoke("train", "probe", "--out", str(tmp_path / "p.safetensors"), "--max-false-resolved", "1.5")
    assert bad.exit_code == 2 and "must be in [0, 1)" in bad.output


@pytest.mark.parametrize("command", [["train", "probe"], ["voicegate", "train-gate"]])
def test_checkpoint_paths_are_checked_before_training(tmp_path, command, monkeypatch):
    import agents.hear2act.audio_probe
    import agents.voicegate.audio_gate

    def no_training(*args, **kwargs):
        raise AssertionError("training started before the output path was checked")

    monkeypatch.setattr(agents.hear2act.audio_probe, "train_probe", no_training)
    monkeypatch.setattr(agents.voicegate.audio_gate, "train_gate", no_training)
    result = invoke(*command, "--out", str(tmp_path))  # a folder, not a file
    assert result.exit_code == 2 and "is a folder" in result.output
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = invoke(*command, "--out", str(blocked / "x.safetensors"))  # parent is a file
    assert result.exit_code == 2 and "cannot write" in result.output


def test_eval_logs_to_wandb_offline_without_a_key(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_dir = tmp_path / "run"
    result = invoke(
        "eval",
        "--out",
        str(run_dir),
        "--limit",
        "2",
        "--no-progress",
        "--feedback",
        "prosody",
        "--cell",
        "transcript_only",
        "--wandb-project",
        "hear-gym-test",
    )
    assert result.exit_code == 0, result.output
    offline = list((run_dir / "wandb").glob("offline-run-*"))
    assert len(offline) == 1 and any(offline[0].rglob("*.wandb"))


def test_ladder_figure_from_runs_made_with_state_interventions(tmp_path):
    from hear_gym.envs.hear2act.plots import ladder_rungs

    common = ["--split", "test", "--limit", "3", "--feedback", "prosody", "--no-progress"]
    assert (
        invoke(
            "eval",
            "--out",
            str(tmp_path / "base"),
            "--cell",
            "transcript_only@T",
            "--cell",
            "state_aware@T+S",
            *common,
        ).exit_code
        == 0
    )
    for mode in ("all_resolved", "shuffled", "all_unresolved"):
        result = invoke(
            "eval",
            "--out",
            str(tmp_path / mode),
            "--cell",
            "state_aware@T+S",
            "--state-intervention",
            mode,
            *common,
        )
        assert result.exit_code == 0, result.output
    bad = invoke(
        "eval",
        "--out",
        str(tmp_path / "bad"),
        "--cell",
        "transcript_only@T",
        "--state-intervention",
        "shuffled",
        *common,
    )
    assert bad.exit_code != 0 and "every --cell must be T+S" in bad.output
    runs = [tmp_path / name for name in ("base", "all_resolved", "shuffled", "all_unresolved")]
    result = invoke("report", *map(str, runs), "--ladder", str(tmp_path / "ladder.png"), "--no-plots")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ladder.png").stat().st_size > 10_000
    summaries = [json.loads((run / "metadata.json").read_text()) for run in runs]
    rungs = ladder_rungs(summaries)["prosody"]
    assert list(rungs) == ["no state", "correct", "all-resolved", "shuffled", "all-unresolved"]
    assert rungs["correct"]["point"] == 1.0 and rungs["all-unresolved"]["point"] < 1.0


def test_prosody_option_selects_the_plan_table(tmp_path):
    result = invoke(
        "listen", "--out", str(tmp_path / "labels"), "--every-label", "Sure.", "--prosody", "clear"
    )
    assert result.exit_code == 0, result.output
    assert "prosody: clear" in (tmp_path / "labels" / "labels.txt").read_text()
    for command in (
        ["eval", "--out", str(tmp_path / "run")],
        ["render", "--cache-dir", str(tmp_path / "c")],
        ["listen", "--out", str(tmp_path / "x"), "--every-label", "Sure."],
        ["train", "probe", "--out", str(tmp_path / "p.safetensors")],
    ):
        result = invoke(*command, "--prosody", "subtle")
        assert result.exit_code == 2 and "unknown prosody plan table" in result.output, command
