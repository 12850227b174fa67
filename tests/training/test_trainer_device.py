"""Where the trainers train (``--device``): TRL's device arguments, PPO's sb3 device, and one-line
refusals, at the CLI too, of a device this machine lacks, before any run folder exists. GPUs are
simulated by patching torch.cuda; the trainers' CPU path is what their own tests run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agents.device import DeviceError
from hear_gym.cli.app import app
from training.llm.common import device_arguments
from training.llm.dialogue_grpo import DialogueGRPOSettings
from training.llm.grpo import GRPOSettings
from training.llm.sft import SFTSettings
from training.ppo import train as ppo_train
from training.ppo.settings import PPOSettings

HEAR2ACT = {"feedback": "prosody", "turn_cost": 0.02}


def test_trl_trains_in_float32_on_the_cpu_and_under_bfloat16_on_a_gpu_that_has_it(gpus):
    gpus(0)
    cpu = {"use_cpu": True, "bf16": False, "fp16": False, "activation_checkpointing": False}
    assert device_arguments("auto") == device_arguments("cpu") == cpu
    gpus(1, major=8)
    gpu = {"use_cpu": False, "bf16": True, "fp16": False, "activation_checkpointing": True}
    assert device_arguments("auto") == device_arguments("cuda") == gpu
    assert device_arguments("cpu") == cpu
    gpus(1, major=7)
    assert device_arguments("cuda:0") == {**gpu, "bf16": False}


def test_dtype_and_gradient_checkpointing_reach_trl(gpus):
    """--dtype: bf16 keeps bfloat16 autocast where the GPU has it (the weights themselves load in
    bfloat16, ``training_dtype``); fp16 is float16 autocast, refused on a CPU in one line; fp32
    none. --gradient-checkpointing overrides the default (on a GPU, off on the CPU) both ways."""
    import torch

    from training.llm.common import training_dtype

    gpus(1, major=8)
    assert device_arguments("cuda", "fp16") == {
        "use_cpu": False,
        "bf16": False,
        "fp16": True,
        "activation_checkpointing": True,
    }
    assert device_arguments("cuda", "fp32")["bf16"] is False and device_arguments("cuda", "bf16")["bf16"]
    assert device_arguments("cuda", "auto", gradient_checkpointing=False)["activation_checkpointing"] is False
    assert device_arguments("cpu", "bf16", gradient_checkpointing=True)["activation_checkpointing"] is True
    with pytest.raises(ValueError, match="fp16 trains under float16 autocast, which needs a CUDA GPU"):
        device_arguments("cpu", "fp16")
    with pytest.raises(ValueError, match="dtype 'half': choose one of auto, bf16, fp16, fp32"):
        device_arguments("cpu", "half")
    assert [training_dtype(d) for d in ("auto", "fp32", "fp16", "bf16")] == [torch.float32] * 3 + [
        torch.bfloat16
    ]


def test_a_trainer_names_how_to_reach_another_gpu(gpus):
    gpus(2)
    with pytest.raises(DeviceError, match="CUDA_VISIBLE_DEVICES=N and device cuda"):
        device_arguments("cuda:1")


@pytest.mark.parametrize("settings_class", [SFTSettings, GRPOSettings, DialogueGRPOSettings])
def test_llm_settings_refuse_a_missing_device_first(gpus, tmp_path, settings_class):
    gpus(0)
    with pytest.raises(DeviceError, match="device 'cuda': CUDA is not available"):
        settings_class(out=tmp_path / "run", model=str(tmp_path / "no_model"), device="cuda")
    assert not (tmp_path / "run").exists()


def test_ppo_trains_on_the_device_it_names(gpus, tmp_path, monkeypatch):
    """The sb3 model is built on the resolved device: the CPU by default, the first GPU for auto
    where torch sees one."""
    built = []

    class Built(Exception):
        pass

    def record(*args, device, **kwargs):
        built.append(device)
        raise Built

    monkeypatch.setattr(ppo_train, "MaskablePPO", record)
    tiny = {"n_envs": 1, "wandb_project": None, "progress": False}
    for device, count, expected in [
        (None, 1, "cpu"),
        ("auto", 0, "cpu"),
        ("auto", 1, "cuda:0"),
        ("cuda:1", 2, "cuda:1"),
    ]:
        gpus(count)
        chosen = {} if device is None else {"device": device}
        with pytest.raises(Built):
            ppo_train.learn_sb3(PPOSettings(out=tmp_path, env_options=HEAR2ACT, **tiny, **chosen), None)
        assert built[-1] == expected


def test_ppo_settings_refuse_a_device_they_cannot_use(gpus, tmp_path):
    gpus(0)
    with pytest.raises(DeviceError, match="CUDA is not available"):
        PPOSettings(out=tmp_path, env_options=HEAR2ACT, device="cuda")
    gpus(1)
    with pytest.raises(ValueError, match="device 'cuda' needs backend 'sb3'"):
        PPOSettings(out=tmp_path, env_options=HEAR2ACT, device="cuda", backend="rllib")


def test_a_ppo_run_from_before_the_device_option_reads_as_cpu(gpus, tmp_path):
    from training.ppo.run_folder import prior_run

    saved = PPOSettings(out=tmp_path, env_options=HEAR2ACT).to_json()
    assert saved.pop("device") == "cpu"
    (tmp_path / "settings.json").write_text(json.dumps(saved))
    (tmp_path / "curve.jsonl").write_text("")
    assert prior_run(PPOSettings(out=tmp_path, env_options=HEAR2ACT, device="cpu")) == {"resume": True}
    gpus(1)
    with pytest.raises(FileExistsError, match="different training run"):
        prior_run(PPOSettings(out=tmp_path, env_options=HEAR2ACT, device="cuda"))


@pytest.mark.parametrize(
    "command,count,message",
    [
        (["train", "ppo", "--option", "feedback=prosody", "--device", "cuda"], 0, "CUDA is not available"),
        (["train", "ppo", "--option", "feedback=prosody", "--device", "gpu"], 1, "device 'gpu': write auto"),
        (["train", "sft", "--model", "m", "--device", "cuda:3"], 2, "this machine has 2 CUDA device(s)"),
        (["train", "grpo", "--model", "m", "--device", "cuda:1"], 2, "CUDA_VISIBLE_DEVICES=N"),
        (["train", "dialogue-grpo", "--model", "m", "--device", "cuda"], 0, "CUDA is not available"),
        (["train", "sft", "--audio", "--model", "m", "--device", "cud"], 0, "device 'cud': write auto"),
    ],
)
def test_cli_refuses_a_bad_device_in_one_line(gpus, tmp_path, command, count, message):
    gpus(count)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [*command, "--out", str(out), "--no-wandb"])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()
