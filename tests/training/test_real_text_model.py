"""A text checkpoint of a real architecture with the chat template the hub ships
(``tests/real_models``: Qwen2.5-Instruct, ``Qwen2ForCausalLM``) through every LLM trainer and the
evaluation: SFT with LoRA in bfloat16 on the CPU (the adapter round-trips), paired GRPO with
gradient checkpointing, dialogue GRPO through the tools and the text interfaces, ``hear-gym eval``
with ``--dtype``; and the one-line refusals of remote code, fp16 on a CPU and vLLM."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
import torch
from reward_spies import vary_rewards
from typer.testing import CliRunner

from agents.llm.factory import check_spec, client_from_spec, release_client
from agents.llm.loading import ChatClientError
from agents.voicegate.grpo_items import EnvReward
from hear_gym.cli.app import app
from training.llm.dialogue_grpo import train_dialogue_grpo
from training.llm.grpo import GRPOSettings, train_grpo
from training.llm.sft import SFTSettings, train_sft

VOICEGATE = {"limit": 2, "families": ("speaker_switch",), "batch_size": 2}


def _curve(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]


def test_sft_trains_a_lora_in_bfloat16_on_the_cpu_and_the_adapter_round_trips(real_models, tmp_path):
    model = str(real_models("text"))
    result = train_sft(
        out=tmp_path / "sft",
        model=model,
        demo_limit=2,
        max_steps=1,
        batch_size=2,
        learning_rate=1e-2,
        dtype="bf16",
        evaluation={**VOICEGATE, "base": False},
        wandb_project=None,
        progress=False,
    )
    assert json.loads((tmp_path / "sft/settings.json").read_text())["settings"]["dtype"] == "bf16"
    train = next(r for r in _curve(tmp_path / "sft") if r["kind"] == "train" and "loss" in r)
    assert train["grad_norm"] > 0
    spec = f"hf:{result['model']}?device=cpu&dtype=bf16&max_new_tokens=4"  # the adapter over its base
    client = client_from_spec(spec)
    assert client.model.dtype == torch.bfloat16
    base = client_from_spec(f"hf:{model}?device=cpu&dtype=bf16&max_new_tokens=4")
    names = [
        k for k, v in client.model.state_dict().items() if not torch.equal(v, base.model.state_dict()[k])
    ]
    assert names and all(k.split(".")[-2] in ("q_proj", "k_proj", "v_proj", "o_proj") for k in names)
    release_client(spec)
    assert client.model is None  # released: its memory is free
    played = (tmp_path / "sft/evals/final/results.jsonl").read_text().splitlines()
    assert len(played) == 2 and json.loads(played[0])["cell"] == "llm@T"


@pytest.mark.parametrize("paired", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_grpo_runs_with_gradient_checkpointing(real_models, tmp_path, monkeypatch, paired):
    vary_rewards(monkeypatch, EnvReward)
    from transformers import PreTrainedModel

    checkpointing = []
    original = PreTrainedModel.activation_checkpointing_enable

    def spy(model, *args, **kwargs):
        checkpointing.append(type(model).__name__)
        return original(model, *args, **kwargs)

    monkeypatch.setattr(PreTrainedModel, "activation_checkpointing_enable", spy)
    result = train_grpo(
        out=tmp_path / "grpo",
        model=str(real_models("text")),
        paired=paired,
        families=("speaker_switch",),
        item_limit=1,
        num_generations=4,
        batch_size=4,
        max_steps=1,
        max_completion_length=6,
        learning_rate=1e-3,
        gradient_checkpointing=True,
        lora={"enabled": False},
        evaluation={**VOICEGATE, "base": False},
        wandb_project=None,
        progress=False,
    )
    assert set(checkpointing) == {"Qwen2ForCausalLM"}  # switched on, on the CPU too
    train = next(r for r in _curve(tmp_path / "grpo") if r["kind"] == "train" and "reward" in r)
    assert train["grad_norm"] > 0 and train.get("paired/dropped_group_fraction", 0.0) == 0.0
    assert (Path(result["model"]) / "model.safetensors").is_file()


@pytest.mark.slow  # 13 s for both: the default tier keeps its 5 minutes
@pytest.mark.parametrize("interface", ["tools", "text"])
def test_dialogue_grpo_trains_under_the_hub_template(real_models, tmp_path, interface):
    """Qwen2.5's template is one TRL parses tool calls under (tools) and renders a dialogue
    append-only (text)."""
    result = train_dialogue_grpo(
        out=tmp_path / interface,
        model=str(real_models("text")),
        interface=interface,
        n_scenarios=1,
        scenarios_per_step=1,
        num_generations=2,
        max_completion_length=48,
        max_tool_calls=2,
        max_steps=1,
        learning_rate=1e-3,
        env_options={"feedback": "explicit", "max_turns": 3},
        evaluation={"limit": 1, "base": False, "batch_size": 1},
        wandb_project=None,
        progress=False,
    )
    assert result["last"] is not None and result["last"]["dialogues"] == 2
    assert "final" in result["metrics"]


def test_eval_cli_loads_the_checkpoint_in_the_dtype_asked(real_models, tmp_path):
    model = real_models("text")
    run = CliRunner().invoke(
        app,
        ["eval", "--env", "hear_gym/VoiceGate-v0", "--out", str(tmp_path / "run"), "--cell", "llm@T"]
        + ["--limit", "2", "--llm-client", f"hf:{model}?device=cpu&max_new_tokens=4", "--dtype", "bf16"]
        + ["--batch-size", "2", "--no-progress"],
    )
    assert run.exit_code == 0, run.output
    assert len((tmp_path / "run/results.jsonl").read_text().splitlines()) == 2
    refused = CliRunner().invoke(
        app,
        ["eval", "--env", "hear_gym/VoiceGate-v0", "--out", str(tmp_path / "r"), "--cell", "llm@T"]
        + ["--llm-client", f"hf:{model}", "--dtype", "half"],
    )
    assert refused.exit_code != 0 and "dtype 'half': choose one of auto, bf16, fp16, fp32" in refused.output


@pytest.fixture
def shipping_code(real_models, tmp_path):
    """The text checkpoint as one that ships its own model code (``auto_map``)."""
    folder = tmp_path / "custom"
    shutil.copytree(real_models("text"), folder)
    (folder / "configuration_custom.py").write_text(
        "from transformers import Qwen2Config\n\n\nclass CustomConfig(Qwen2Config):\n    model_type = 'custom_qwen2'\n"
    )
    (folder / "modeling_custom.py").write_text(
        "from transformers import Qwen2ForCausalLM\n\nfrom .configuration_custom import CustomConfig\n\n\n"
        "class CustomForCausalLM(Qwen2ForCausalLM):\n    config_class = CustomConfig\n"
    )
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {
        "AutoConfig": "configuration_custom.CustomConfig",
        "AutoModelForCausalLM": "modeling_custom.CustomForCausalLM",
    }
    config["model_type"] = "custom_qwen2"
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_checkpoint_that_ships_code_loads_only_when_trusted(shipping_code, tmp_path):
    with pytest.raises(ChatClientError, match="ships its own code .*pass --trust-remote-code") as refused:
        check_spec(f"hf:{shipping_code}")
    assert "\n" not in str(refused.value)
    with pytest.raises(ChatClientError, match="ships its own code"):
        SFTSettings(out=tmp_path / "sft", model=str(shipping_code))
    assert not (tmp_path / "sft").exists()
    spec = f"hf:{shipping_code}?device=cpu&trust_remote_code=true&max_new_tokens=2"
    check_spec(spec)
    client = client_from_spec(spec)
    assert type(client.model).__name__ == "CustomForCausalLM"
    assert isinstance(client.complete([[{"role": "user", "content": "hello"}]])[0], str)
    release_client(spec)
    settings = SFTSettings(out=tmp_path / "sft", model=str(shipping_code), trust_remote_code=True)
    assert settings.trust_remote_code


def test_fp16_on_a_cpu_and_vllm_without_vllm_are_refused_in_one_line(real_models, tmp_path):
    model = str(real_models("text"))
    with pytest.raises(ValueError, match="fp16 trains under float16 autocast, which needs a CUDA GPU"):
        SFTSettings(out=tmp_path / "a", model=model, device="cpu", dtype="fp16")
    if importlib.util.find_spec("vllm") is None:  # vLLM is in no extra: the refusal says what to do instead
        with pytest.raises(ValueError, match="needs vLLM, which no hear-gym extra installs"):
            GRPOSettings(out=tmp_path / "b", model=model, vllm_mode="colocate")
