"""SFT -> GRPO chains: what a GRPO run started from an SFT adapter saves (``final/``, every
``checkpoints/step_N``) loads, through the evaluation's own ``hf:`` / ``hf-audio:`` client, as the
model it trained (the SFT's weights included), and ``start_folder`` on its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from reward_spies import vary_rewards

import training.llm.common as common
from agents.llm.clients import load_pretrained
from training.llm.start_model import START_DIR, start_folder
from training.tiny_model import build_tiny_audio_lm, build_tiny_causal_lm

QUIET = {"wandb_project": None, "progress": False}
ONE_ITEM = {"limit": 1, "families": ("speaker_switch",), "batch_size": 1}


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="module")
def tiny_audio(tmp_path_factory) -> Path:
    return build_tiny_audio_lm(tmp_path_factory.mktemp("models") / "tiny_audio")


@pytest.fixture
def evaluated(monkeypatch) -> dict[str, torch.nn.Module]:
    """The models the trainers' evaluations play, by "run/checkpoint": each built by the
    evaluation's own agent factory (``from_client_spec``: the hf client loads the folder), the env
    loop itself skipped."""
    models = {}

    def load_only(out_dir, config, agents, **kwargs):
        (factory,) = agents.values()
        models[f"{out_dir.parents[1].name}/{out_dir.name}"] = factory().client.model
        return {"cells": {config.cells[0].name: {"metrics": {}}}}

    monkeypatch.setattr(common, "evaluate", load_only)
    return models


@pytest.fixture
def trainers(monkeypatch) -> list:
    """The trainers the GRPO runs train with, kept for a look at the model they trained."""
    import training.llm.audio_grpo as audio_grpo
    import training.llm.grpo as grpo

    kept = []
    for module in (grpo, audio_grpo):
        real = module.run_training

        def keep(trainer, *args, real=real, **kwargs):
            kept.append(trainer)
            return real(trainer, *args, **kwargs)

        monkeypatch.setattr(module, "run_training", keep)
    return kept


def _weights(model) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def _merged(model_class, base: Path, *adapters: Path) -> dict[str, torch.Tensor]:
    """The base with each adapter merged in turn, by peft directly (not the project's loader)."""
    from peft import PeftModel

    model = model_class.from_pretrained(base)
    for adapter in adapters:
        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    return _weights(model)


def _trained_base(trainer) -> dict[str, torch.Tensor]:
    """The frozen weights under the trainer's LoRA: the model its adapter was trained on."""
    weights = _weights(trainer.model.get_base_model())
    return {k.replace(".base_layer", ""): v for k, v in weights.items() if ".lora_" not in k}


def _assert_same(loaded: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], what: str) -> None:
    assert loaded.keys() == expected.keys(), what
    differ = {k: (loaded[k] - expected[k]).abs().max().item() for k in _changed(loaded, expected)}
    assert not differ, f"{what}: {len(differ)} tensors differ, by up to {max(differ.values(), default=0):.3g}"


def _changed(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> list[str]:
    return [k for k in before if not torch.equal(before[k], after[k])]


def _check_chain(model_class, raw: Path, sft: Path, grpo: Path, checkpoints, evaluated, trainer) -> None:
    """SFT changed q_proj; GRPO trained on the SFT's weights; ``base`` plays them, and every saved
    GRPO adapter loads (client) as those weights with the adapter merged, its own change included."""
    raw_weights = _merged(model_class, raw)
    sft_weights = _merged(model_class, raw, sft / "final")
    assert any("q_proj" in k for k in _changed(raw_weights, sft_weights))
    _assert_same(_trained_base(trainer), sft_weights, "the model GRPO trained on")
    _assert_same(_weights(evaluated[f"{grpo.name}/base"]), sft_weights, "base")
    for name in ("final", *checkpoints):
        folder = grpo / ("checkpoints" if name.startswith("step_") else "") / name
        expected = _merged(model_class, raw, sft / "final", folder)
        assert _changed(sft_weights, expected), f"{name}: GRPO changed nothing to check"
        _assert_same(_weights(evaluated[f"{grpo.name}/{name}"]), expected, name)
        _assert_same(
            _weights(load_pretrained(model_class, str(folder))), expected, f"{name} via load_pretrained"
        )
        base = json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"]
        assert base == str((grpo / START_DIR).resolve())  # the SFT-merged model the run saved


@pytest.mark.slow
@pytest.mark.parametrize("paired", [False, True], ids=["plain", "paired"])
def test_grpo_after_sft_saves_and_loads_the_model_it_trained(
    tiny_lm, tmp_path, monkeypatch, evaluated, trainers, paired
):
    from transformers import AutoModelForCausalLM

    from agents.voicegate.grpo_items import EnvReward
    from training.llm.grpo import train_grpo
    from training.llm.sft import train_sft

    vary_rewards(monkeypatch, EnvReward)
    sft = tmp_path / "sft"
    train_sft(
        out=sft,
        model=str(tiny_lm),
        demo_limit=4,
        max_steps=1,
        batch_size=4,
        learning_rate=1e-2,
        evaluation={**ONE_ITEM, "base": False},
        **QUIET,
    )
    grpo = tmp_path / "grpo"
    train_grpo(
        out=grpo,
        model=str(sft / "final"),
        families=("speaker_switch",),
        paired=paired,
        item_limit=2,
        num_generations=2,
        batch_size=2,
        max_steps=2,
        eval_every=1,
        max_completion_length=4,
        learning_rate=1e-2,
        evaluation=ONE_ITEM,
        **QUIET,
    )
    (trainer,) = trainers
    _check_chain(AutoModelForCausalLM, tiny_lm, sft, grpo, ["step_1"], evaluated, trainer)


@pytest.mark.slow
def test_audio_grpo_after_audio_sft_saves_and_loads_the_model_it_trained(
    tiny_audio, tmp_path, monkeypatch, evaluated, trainers
):
    from transformers import Qwen2AudioForConditionalGeneration

    from agents.voicegate.grpo_items import EnvReward
    from training.llm.audio_grpo import train_audio_grpo
    from training.llm.audio_sft import train_audio_sft

    vary_rewards(monkeypatch, EnvReward)
    sft = tmp_path / "audio_sft"
    train_audio_sft(
        out=sft,
        model=str(tiny_audio),
        families=("speaker_switch",),
        demo_limit=2,
        max_steps=1,
        batch_size=2,
        learning_rate=1e-2,
        evaluation={**ONE_ITEM, "base": False},
        **QUIET,
    )
    grpo = tmp_path / "audio_grpo"
    train_audio_grpo(
        out=grpo,
        model=str(sft / "final"),
        families=("speaker_switch",),
        item_limit=1,
        num_generations=2,
        batch_size=2,
        max_steps=1,
        max_completion_length=4,
        learning_rate=1e-2,
        evaluation=ONE_ITEM,
        **QUIET,
    )
    (trainer,) = trainers
    _check_chain(Qwen2AudioForConditionalGeneration, tiny_audio, sft, grpo, [], evaluated, trainer)


def _adapter(tiny_lm: Path, folder: Path) -> Path:
    """A LoRA adapter over the tiny model whose weights change q_proj and v_proj."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    peft = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_lm),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]),
    )
    with torch.no_grad():
        for name, parameter in peft.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.linspace(-0.5, 0.5, parameter.numel()).view_as(parameter))
    peft.save_pretrained(folder)
    return folder


def test_start_folder_holds_the_adapter_merged_once_and_leaves_checkpoints_alone(tiny_lm, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.llm.start_model import load_text_model

    adapter = _adapter(tiny_lm, tmp_path / "adapter")
    assert start_folder(str(tiny_lm), tmp_path / "plain", load_text_model) == str(tiny_lm)
    assert not (tmp_path / "plain").exists()

    start = start_folder(str(adapter), tmp_path / "run", load_text_model)
    assert start == str((tmp_path / "run" / START_DIR).resolve())
    merged = _merged(AutoModelForCausalLM, tiny_lm, adapter)
    _assert_same(_weights(AutoModelForCausalLM.from_pretrained(start)), merged, "start/")
    assert (
        AutoTokenizer.from_pretrained(start).get_vocab() == AutoTokenizer.from_pretrained(tiny_lm).get_vocab()
    )
    assert list(Path(start).glob("*.safetensors")) and not (tmp_path / "run" / "start.partial").exists()

    def never(model):
        raise AssertionError("a resumed run reuses start/")

    assert start_folder(str(adapter), tmp_path / "run", never) == start


@pytest.mark.slow
def test_every_process_of_a_launch_loads_the_start_the_main_process_wrote(tiny_lm, tmp_path):
    """torchrun, 2 CPU processes: process 0 writes start/ (slowly), process 1 waits for it."""
    import os
    import subprocess
    import sys

    adapter = _adapter(tiny_lm, tmp_path / "adapter")
    script = Path(__file__).with_name("two_process_start.py")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2"]
    done = subprocess.run(
        [*torchrun, str(script), str(tmp_path / "run"), str(adapter)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "WANDB_MODE": "disabled"},
    )
    assert done.returncode == 0, done.stderr[-6000:]
    got = [json.loads((tmp_path / f"start_{rank}.json").read_text()) for rank in (0, 1)]
    assert got[0] == got[1] and got[0]["start"] == str((tmp_path / "run" / START_DIR).resolve())


@pytest.mark.slow
def test_sft_after_sft_saves_and_loads_the_model_it_trained(tiny_lm, tmp_path, monkeypatch, evaluated):
    """A second SFT run started from the first's adapter trains on the first's weights, and its
    ``final/`` loads as them plus its own adapter."""
    from transformers import AutoModelForCausalLM

    import training.llm.sft as sft_module

    kept = []
    real = sft_module.run_training
    monkeypatch.setattr(sft_module, "run_training", lambda t, *a, **k: kept.append(t) or real(t, *a, **k))
    runs = [tmp_path / "sft", tmp_path / "sft_again"]
    for out, model in zip(runs, [str(tiny_lm), str(runs[0] / "final")], strict=True):
        sft_module.train_sft(
            out=out,
            model=model,
            demo_limit=4,
            max_steps=1,
            batch_size=4,
            learning_rate=1e-2,
            evaluation={**ONE_ITEM, "base": False},
            **QUIET,
        )
    first = _merged(AutoModelForCausalLM, tiny_lm, runs[0] / "final")
    _assert_same(_trained_base(kept[1]), first, "the model the second SFT trained on")
    expected = _merged(AutoModelForCausalLM, tiny_lm, runs[0] / "final", runs[1] / "final")
    assert _changed(first, expected), "the second SFT changed nothing to check"
    _assert_same(_weights(evaluated[f"{runs[1].name}/final"]), expected, "final")
    base = json.loads((runs[1] / "final" / "adapter_config.json").read_text())["base_model_name_or_path"]
    assert base == str((runs[1] / START_DIR).resolve())
