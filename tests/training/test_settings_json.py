"""Every trainer's ``settings.json`` keeps its format, so run folders written before the settings
shared their fields (``training.run_settings``, ``training.llm.settings``) still resume.

``data/settings_json/*.json`` were written by the trainers' settings before that change (the same
arguments as ``CASES``; the run folder and model replaced by ``<OUT>`` and ``<MODEL>``). Each case
checks that today's settings record the same run, and that its run folder holding the old file
is taken as this run (resumed), not refused as another. A folder written before ``--device``
existed (its settings lack ``device``) resumes on the device chosen now, and a setting added since
(``training.llm.run_folder.ADDED_SINCE``) is read as the value earlier runs trained with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from training.llm.audio_grpo import AudioGRPOSettings  # noqa: E402
from training.llm.audio_sft import AudioSFTSettings  # noqa: E402
from training.llm.dialogue_grpo import DialogueGRPOSettings  # noqa: E402
from training.llm.grpo import GRPOSettings  # noqa: E402
from training.llm.run_folder import SETTINGS_FILE, finish_curve, start_curve, trained_settings  # noqa: E402
from training.llm.sft import SFTSettings  # noqa: E402
from training.ppo.run_folder import prior_run  # noqa: E402
from training.ppo.settings import PPOSettings  # noqa: E402
from training.tiny_model import build_tiny_causal_lm  # noqa: E402

DATA = Path(__file__).parent / "data" / "settings_json"

# name: (settings class, arguments besides out and model). The settings check that the model
# folder loads, not what kind of model it is: the tiny text model stands in for the audio one.
CASES = {
    "sft": (SFTSettings, {"demo_limit": 8, "wandb_project": None}),
    "grpo": (GRPOSettings, {"item_limit": 4, "num_generations": 4, "batch_size": 4}),
    "grpo_paired_assent": (
        GRPOSettings,
        {"task": "hear2act_assent", "paired": True, "env_options": {"turn_cost": 0.02}},
    ),
    "dialogue_grpo": (DialogueGRPOSettings, {"n_scenarios": 4}),
    "audio_sft": (AudioSFTSettings, {"demo_limit": 4, "wandb_project": None}),
    "audio_grpo": (AudioGRPOSettings, {"item_limit": 2, "num_generations": 4, "batch_size": 4}),
}
ENV_ID = "hear_gym/VoiceGate-v0"  # the provenance the run folder records
PPO_OPTIONS = {"feedback": "prosody", "turn_cost": 0.1, "reward": "success"}


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


def _saved(name: str, out: Path, model: Path | None = None) -> dict:
    text = (DATA / f"{name}.json").read_text(encoding="utf-8").replace("<OUT>", str(out))
    return json.loads(text.replace("<MODEL>", str(Path(model).resolve()) if model else "<MODEL>"))


def _as_json(settings) -> dict:
    """The settings as their run folder's ``settings.json`` holds them (tuples as lists)."""
    return json.loads(json.dumps(settings.to_json(), default=str))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_language_model_run_folder_written_before_keeps_resuming(model, tmp_path, name):
    settings_class, arguments = CASES[name]
    out = tmp_path / "run"
    settings = settings_class(out=out, model=str(model), **arguments)
    saved = _saved(name, out, model)
    assert trained_settings(_as_json(settings)) == trained_settings(saved)
    for old in (saved, {k: v for k, v in saved.items() if k != "device"}):  # and before --device
        out.mkdir(exist_ok=True)
        (out / SETTINGS_FILE).write_text(json.dumps({"settings": old, "provenance": {}}))
        moved = settings_class(out=out, model=str(model), **{**arguments, "device": "cpu"})
        curve = start_curve(out, moved.to_json(), ENV_ID, None)  # refused: FileExistsError
        finish_curve(curve)
        assert json.loads((out / SETTINGS_FILE).read_text())["settings"]["device"] == "cpu"


def test_another_run_is_still_refused(model, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    saved = _saved("sft", out, model)
    (out / SETTINGS_FILE).write_text(json.dumps({"settings": {**saved, "seed": 5}, "provenance": {}}))
    settings = SFTSettings(out=out, model=str(model), demo_limit=8, wandb_project=None)
    with pytest.raises(FileExistsError, match="different training run"):
        start_curve(out, settings.to_json(), ENV_ID, None)


def test_a_setting_added_since_is_read_as_what_earlier_runs_trained_with(model, tmp_path):
    """A GRPO folder from before ``top_entropy_quantile`` trained on every token (1.0): it is
    this run at 1.0 and another run at 0.2."""
    out = tmp_path / "run"
    out.mkdir()
    saved = _saved("grpo", out, model)
    assert "top_entropy_quantile" not in saved
    (out / SETTINGS_FILE).write_text(json.dumps({"settings": saved, "provenance": {}}))
    arguments = CASES["grpo"][1]
    masked = GRPOSettings(out=out, model=str(model), **arguments, top_entropy_quantile=0.2)
    with pytest.raises(FileExistsError, match="different training run"):
        start_curve(out, masked.to_json(), ENV_ID, None)
    finish_curve(
        start_curve(out, GRPOSettings(out=out, model=str(model), **arguments).to_json(), ENV_ID, None)
    )


def test_a_ppo_run_folder_written_before_keeps_resuming(tmp_path):
    settings = PPOSettings(out=tmp_path, env_options=PPO_OPTIONS, policy="per_option")
    saved = _saved("ppo", tmp_path)
    current = _as_json(settings)
    assert {key: current[key] for key in saved} == saved  # settings added since take their defaults
    (tmp_path / "settings.json").write_text(json.dumps(saved))
    (tmp_path / "curve.jsonl").write_text("")
    assert prior_run(settings) == {"resume": True}


def test_defaults_come_from_the_families_material(model, tmp_path):
    """No env or task named: the family that declares itself the default for that material."""
    model = str(model)
    assert SFTSettings(out=tmp_path, model=model).env_id == _saved("sft", tmp_path)["env_id"]
    assert GRPOSettings(out=tmp_path, model=model).task == _saved("grpo", tmp_path)["task"]
    assert DialogueGRPOSettings(out=tmp_path, model=model).task == _saved("dialogue_grpo", tmp_path)["task"]
    assert PPOSettings(out=tmp_path, env_options=PPO_OPTIONS).env_id == _saved("ppo", tmp_path)["env_id"]
