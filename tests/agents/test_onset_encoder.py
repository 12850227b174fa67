"""The Onset probe on a pretrained speech encoder's representation, exercised on a tiny WavLM
built offline (the loading code is the real one: ``from_pretrained`` on a local folder)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("transformers")
from typer.testing import CliRunner  # noqa: E402

from agents.onset.baselines import EncoderProbeAgent  # noqa: E402
from agents.onset.encoder import SpeechEncoder  # noqa: E402
from agents.onset.probes import Probe, prefix_rows  # noqa: E402
from hear_gym.cli.app import app  # noqa: E402
from hear_gym.core.run_config import Cell, RunConfig  # noqa: E402
from hear_gym.envs.onset.family import FAMILY  # noqa: E402
from hear_gym.eval.results import read_results  # noqa: E402
from hear_gym.eval.runner import run_evaluation  # noqa: E402
from training.tiny_model import build_tiny_speech_encoder  # noqa: E402


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    return build_tiny_speech_encoder(tmp_path_factory.mktemp("encoder"))


def test_the_representation_is_a_pooled_vector_per_prefix(encoder_dir):
    encoder = SpeechEncoder(encoder_dir)
    row = prefix_rows("train", limit_groups=1)[0]
    wave = row.waveform()
    first, again = encoder(wave), encoder(wave)
    assert first.shape == (32,) and first.dtype == np.float32 and np.array_equal(first, again)
    assert not np.array_equal(first, encoder(wave[: len(wave) // 2]))


def test_encoder_probe_needs_its_encoder_and_only_it_takes_one(encoder_dir, tmp_path):
    with pytest.raises(ValueError, match="encoder"):
        Probe("encoder")
    with pytest.raises(ValueError, match="encoder"):
        Probe("audio", encoder=SpeechEncoder(encoder_dir))
    with pytest.raises(ValueError, match="not a saved speech encoder"):
        SpeechEncoder(tmp_path)


def test_the_encoder_probe_plays_through_the_runner_at_smoke_size(encoder_dir, tmp_path):
    # Fitted on two training groups; the CLI version below fits on the whole training split.
    agent = EncoderProbeAgent.from_checkpoint(encoder_dir, rows=prefix_rows("train", limit_groups=2))
    episodes = tuple(FAMILY.item_ids("test")[:3])
    config = RunConfig(FAMILY.env_id, (Cell.parse("encoder_probe@A"),), episodes)
    factory = lambda: EncoderProbeAgent(agent.encoder, agent.probe)  # noqa: E731 (shares the fitted probe)
    run_evaluation(tmp_path, config, {"encoder_probe": factory}, progress=False)
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 3 and all(len(r["predictions"]) == 5 for r in records)


@pytest.mark.slow
def test_eval_plays_the_encoder_probe_from_a_local_folder(encoder_dir, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--env",
            "hear_gym/Onset-v0",
            "--out",
            str(out),
            "--cell",
            f"encoder_probe:{encoder_dir}@A",
            "--limit",
            "4",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(len(r["predictions"]) == 5 for r in records)
