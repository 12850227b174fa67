"""VoiceGate evaluation: results/metadata round trip, resume without loss or duplicates, the
baselines' expected structure (it must emerge from env + agent), the audio gate, the build
export and the CLI."""

import json

import gymnasium as gym
import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from agents.voicegate.audio_gate import AudioGate, AudioGateAgent, GateConfig, train_gate
from agents.voicegate.baselines import AlwaysMuteAgent, TextOnlyGateAgent
from hear_gym.cli.app import app
from hear_gym.envs.voicegate import build as voicegate_build
from hear_gym.envs.voicegate.family import ENV_ID, item_ids, run_config
from hear_gym.envs.voicegate.metrics import headline_metrics
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import run_evaluation
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import make_renderer


def gate_config(agent: str, families, access: str = "A+T"):
    return run_config(agent, access, item_ids("test", families))


SWITCH = gate_config("text_only", ("speaker_switch",), "T")


def run_gate(factory, out, config, **kwargs):
    """Evaluate through the one runner; returns every record of the run."""
    evaluate(out, config, {config.cells[0].agent: factory}, progress=False, **kwargs)
    return read_results(out / "results.jsonl")


@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("text_only")
    return out, run_gate(TextOnlyGateAgent, out, SWITCH)


def test_text_only_agent_selects_tools_but_never_gates(text_run):
    out, records = text_run
    metrics = json.loads((out / "metadata.json").read_text())["cells"]["text_only@T"]["metrics"]
    assert len(records) == 240 and metrics["switch_mute"]["point"] == 0.0
    assert metrics["same_speaker_tool"]["point"] >= 0.95 and metrics["text_only_tool"]["point"] >= 0.95
    assert metrics["switch_mute"]["n_scenarios"] == 80  # groups = held-out pairs


def test_results_round_trip_and_resume(text_run, tmp_path):
    out, records = text_run
    assert read_results(out / "results.jsonl") == records
    assert {k: v.as_dict() for k, v in headline_metrics(records).items()} == json.loads(
        (out / "metadata.json").read_text()
    )["cells"]["text_only@T"]["metrics"]
    # interrupt: keep 100 complete lines and a torn one, then resume
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "results.jsonl").write_text("".join(lines[:100]) + lines[100][:40])
    (tmp_path / "run_config.json").write_text((out / "run_config.json").read_text())
    resumed = run_gate(TextOnlyGateAgent, tmp_path, SWITCH)
    assert [r["key"] for r in resumed][:100] == [r["key"] for r in records][:100]
    assert sorted(r["key"] for r in resumed) == sorted(r["key"] for r in records)


def test_a_different_config_is_refused(text_run):
    out, _ = text_run
    with pytest.raises(ValueError, match="different configuration"):
        run_evaluation(
            out,
            gate_config("text_only", ("self_talk",), "T"),
            {"text_only": TextOnlyGateAgent},
            progress=False,
        )
    with pytest.raises(ValueError, match="needs access"):
        run_evaluation(
            out.parent / "audio_gate_text",
            gate_config("audio_gate", ("self_talk",), "T"),
            {"audio_gate": lambda: AudioGateAgent(None)},
            progress=False,
        )


def test_always_mute_passes_mute_targets_and_fails_positive_controls(tmp_path):
    records = run_gate(
        AlwaysMuteAgent, tmp_path, gate_config("always_mute", ("speaker_switch", "self_talk"), "T")
    )
    metrics = headline_metrics(records)
    assert metrics["switch_mute"].point == metrics["self_talk_mute"].point == 1.0
    assert metrics["same_speaker_tool"].point == metrics["text_only_tool"].point == 0.0


@pytest.fixture(scope="module")
def gate_cache():
    return RenderCache(make_renderer("espeak"))


@pytest.fixture(scope="module")
def small_gate(tmp_path_factory, gate_cache):
    path = tmp_path_factory.mktemp("gate") / "gate.safetensors"
    return train_gate(GateConfig(limit_per_family=80, epochs=200), path, gate_cache), path


def test_gate_training_is_deterministic_and_round_trips_at_smoke_size(tmp_path):
    # The full-size version (accuracy bounds) is in the slow tier, below.
    config = GateConfig(limit_per_family=6, epochs=5)
    gate = train_gate(config, tmp_path / "gate.safetensors")
    again = train_gate(config)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(gate.model.state_dict().values(), again.model.state_dict().values(), strict=True)
    )
    loaded = AudioGate.load(tmp_path / "gate.safetensors")
    assert loaded.report == gate.report and np.array_equal(loaded.mean, gate.mean)


@pytest.mark.slow
def test_gate_is_learnable_deterministic_and_round_trips(small_gate, gate_cache):
    gate, path = small_gate
    held_out = gate.report["test"]  # held out, unseen voices, from 160 training inputs
    # gen-3 puts the speaker's sentence pause at every boundary, so the switch's 600 ms is a
    # smaller share of the pause this gate leans on: 0.79 here (gen-2: above 0.8), 0.89 at full size
    assert held_out["speaker_switch"]["balanced"] >= 0.75
    # side-talk's addressee is not in the acoustics (one voice, both near): a learned
    # multi-feature adversary stays near chance (it was 100% with the turned-away rendering)
    assert held_out["side_talk"]["balanced"] <= 0.7
    # rendered afresh (a new cache): same speech, same features, same weights
    again = train_gate(GateConfig(limit_per_family=80, epochs=200))
    assert all(
        np.array_equal(a, b)
        for a, b in zip(gate.model.state_dict().values(), again.model.state_dict().values(), strict=True)
    )
    loaded = AudioGate.load(path)
    assert loaded.report == gate.report and np.array_equal(loaded.mean, gate.mean)


def test_gate_checkpoint_errors(tmp_path):
    import torch
    from safetensors.torch import save_file

    save_file({"x": torch.zeros(1)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not a VoiceGate audio-gate checkpoint"):
        AudioGate.load(tmp_path / "other.safetensors")


@pytest.mark.slow
def test_gate_agent_mutes_switched_triggers(small_gate, tmp_path):
    gate, _ = small_gate
    records = run_gate(lambda: AudioGateAgent(gate), tmp_path, gate_config("audio_gate", ("speaker_switch",)))
    metrics = headline_metrics(records)
    # same-speaker tool selection is what the smaller gap share costs (gen-3, 80 training pairs:
    # 0.66; full size, benchmarks/voicegate/baselines.py: 0.80); chance would be 0.5
    assert metrics["switch_mute"].point >= 0.8 and metrics["same_speaker_tool"].point >= 0.6
    assert metrics["text_only_tool"].point == 1.0


def test_build_writes_wavs_and_manifests(tmp_path, monkeypatch):
    items = voicegate_build.all_items()
    few = tuple(items[:4]) + tuple(i for i in items if i.family.value == "side_talk")[:2]
    monkeypatch.setattr(voicegate_build, "all_items", lambda side_talk_cue="none": few)
    summary = voicegate_build.build_items(tmp_path, workers=1, progress=False)
    manifests = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert summary["n_items"] == 6 and summary["n_audio"] == len(manifests) == 5  # one text-only input
    for manifest in manifests:
        audio, rate = sf.read(
            tmp_path / "audio" / voicegate_build.wav_name(manifest["item_id"]), dtype="int16"
        )
        assert rate == 16_000 and len(audio) == round(manifest["duration_s"] * rate)
        assert {"voice", "room", "normalization_gain_db", "peak_dbfs"} <= set(manifest["segments"][0])


def test_cli_eval_and_report(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app, ["voicegate", "eval", "--out", str(tmp_path), "--agent", "always_mute", "--family", "self_talk"]
    )
    assert result.exit_code == 0, result.output
    assert "self_talk_mute" in result.output
    result = runner.invoke(app, ["voicegate", "report", str(tmp_path), "--markdown", str(tmp_path / "t.md")])
    assert result.exit_code == 0 and "| self_talk_mute | 100.0" in (tmp_path / "t.md").read_text()
    bad = runner.invoke(app, ["voicegate", "eval", "--out", str(tmp_path / "x"), "--agent", "oracle"])
    assert bad.exit_code != 0 and "unknown agent" in bad.output
    bad = runner.invoke(app, ["voicegate", "eval", "--out", str(tmp_path / "y"), "--agent", "audio_gate"])
    assert bad.exit_code != 0 and "audio_gate:PATH" in bad.output


def test_cue_balanced_training_set_crosses_field_and_gap_within_both_labels():
    from collections import Counter

    from agents.voicegate.audio_gate import TRAINING_SETS

    pairs, _ = TRAINING_SETS["cue_balanced"]
    rows = pairs("train", GateConfig())
    cells = Counter((item.cues["field"], item.cues["gap_ms"], label) for item, label in rows)
    assert len(rows) == 640 and set(cells.values()) == {80} and len(cells) == 8
    assert all(label == int(item.cues["source"] == "different") for item, label in rows)
    assert {item.split for item, _ in rows} == {"train"}
    with pytest.raises(ValueError, match="training must be one of"):
        train_gate(GateConfig(training="oracle", limit_per_family=2))


def test_cli_eval_logs_to_wandb_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    result = CliRunner().invoke(
        app,
        [
            "voicegate",
            "eval",
            "--out",
            str(tmp_path),
            "--agent",
            "always_mute",
            "--family",
            "self_talk",
            "--wandb-project",
            "hear-gym-test",
        ],
    )
    assert result.exit_code == 0, result.output
    offline = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(offline) == 1 and any(offline[0].rglob("*.wandb"))


def test_cli_listen_writes_one_item(tmp_path):
    result = CliRunner().invoke(
        app, ["voicegate", "listen", "ss-unlock_door-03/switch", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    audio, rate = sf.read(tmp_path / "ss-unlock_door-03__switch.wav")
    record = json.loads((tmp_path / "ss-unlock_door-03__switch.json").read_text())
    assert rate == 16_000 and len(audio) == round(record["manifest"]["duration_s"] * rate)
    assert record["item"]["target"]["kind"] == "mute"
    bad = CliRunner().invoke(app, ["voicegate", "listen", "nope", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "no item" in bad.output
    turned = CliRunner().invoke(
        app, ["voicegate", "listen", "st-0-00", "--out", str(tmp_path), "--side-talk-cue", "turned_away"]
    )
    assert turned.exit_code == 0, turned.output
    segments = json.loads((tmp_path / "st-0-00.json").read_text())["manifest"]["segments"]
    assert {s["placement"] for s in segments} == {"near", "turned_away"}
    bad = CliRunner().invoke(
        app, ["voicegate", "listen", "st-0-00", "--out", str(tmp_path), "--side-talk-cue", "loud"]
    )
    assert bad.exit_code != 0 and "side_talk_cue must be one of" in bad.output


def test_generic_listen_is_voicegate_listen_and_refuses_hear2act_options(tmp_path):
    item = "ss-unlock_door-03/switch"
    generic = CliRunner().invoke(app, ["listen", item, "--env", ENV_ID, "--out", str(tmp_path / "generic")])
    own = CliRunner().invoke(app, ["voicegate", "listen", item, "--out", str(tmp_path / "own")])
    assert generic.exit_code == own.exit_code == 0, generic.output + own.output
    wav = "ss-unlock_door-03__switch.wav"
    assert (tmp_path / "generic" / wav).read_bytes() == (tmp_path / "own" / wav).read_bytes()
    cued = CliRunner().invoke(
        app,
        [
            "listen",
            "st-0-00",
            "--env",
            ENV_ID,
            "--out",
            str(tmp_path),
            "--option",
            "side_talk_cue=turned_away",
        ],
    )
    assert cued.exit_code == 0, cued.output
    segments = json.loads((tmp_path / "st-0-00.json").read_text())["manifest"]["segments"]
    assert {s["placement"] for s in segments} == {"near", "turned_away"}
    refused = CliRunner().invoke(
        app, ["listen", item, "--env", ENV_ID, "--out", str(tmp_path), "--cell", "random@T"]
    )
    assert refused.exit_code == 2 and "takes no option(s) ['cell']" in refused.output
    missing = CliRunner().invoke(app, ["listen", "--env", ENV_ID, "--out", str(tmp_path)])
    assert missing.exit_code == 2 and "give an ITEM_ID" in missing.output


def _render_counts(output: str) -> tuple[int, int]:
    """(rendered, already cached) from render's last line."""
    words = output.strip().splitlines()[-1].split()
    return int(words[0]), int(words[3])


def test_render_fills_the_cache_a_voicegate_env_then_reads(tmp_path):
    args = ["render", "--env", ENV_ID, "--cache-dir", str(tmp_path), "--option", "family=self_talk"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rendered, cached = _render_counts(first.output)
    assert rendered > 0 and cached == 0
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and _render_counts(again.output) == (0, rendered)
    self_talk = item_ids("test", ("self_talk",))
    env = gym.make(ENV_ID, item_ids=list(self_talk), audio_cache_dir=tmp_path, access="A")
    for item in self_talk[:3]:
        env.reset(options={"item_id": item})
    stats = env.unwrapped.cache.stats
    assert stats.renders == 0 and stats.disk_hits > 0
    refused = CliRunner().invoke(app, [*args, "--rollouts", "2"])
    assert refused.exit_code == 2 and "takes no option(s) ['rollouts']" in refused.output
