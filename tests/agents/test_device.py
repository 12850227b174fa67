"""Where models run (agents.device) and the transformers clients that use it: every device form,
a one-line refusal for each mistake, bfloat16 only on a GPU that has it, float32 everywhere else.
GPUs are simulated by patching torch.cuda: the code that picks a CUDA device is the code tested."""

from __future__ import annotations

import pytest
import torch

from agents.device import DeviceError, model_dtype, resolve_device, supports_bf16
from agents.llm.clients import TransformersChatClient, load_pretrained
from agents.llm.factory import check_spec, client_from_spec
from training.tiny_model import build_tiny_causal_lm


@pytest.fixture(scope="module")
def tiny_bf16(tmp_path_factory):
    """A tiny causal LM saved in bfloat16, as most released checkpoints are."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = tmp_path_factory.mktemp("bf16")
    source = build_tiny_causal_lm(root / "fp32", vocab_size=512, hidden=32, layers=1)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.bfloat16)
    model.save_pretrained(root / "bf16")
    AutoTokenizer.from_pretrained(source).save_pretrained(root / "bf16")
    return root / "bf16"


@pytest.mark.parametrize(
    "name,count,expected",
    [
        ("cpu", 2, "cpu"),
        ("auto", 0, "cpu"),
        ("auto", 2, "cuda:0"),
        ("cuda", 1, "cuda:0"),
        ("cuda:0", 1, "cuda:0"),
        ("cuda:1", 2, "cuda:1"),
    ],
)
def test_every_form_resolves_to_one_device(gpus, name, count, expected):
    gpus(count)
    assert resolve_device(name) == expected


@pytest.mark.parametrize(
    "name,count,match",
    [
        ("gpu", 1, r"device 'gpu': write auto, cpu, cuda or cuda:N"),
        ("cuda:", 1, "write auto"),
        ("cuda:x", 1, "write auto"),
        ("cuda:-1", 1, "write auto"),
        ("CUDA", 1, "write auto"),
        ("", 1, "write auto"),
        ("cuda", 0, r"device 'cuda': CUDA is not available here \(torch .*\); use cpu or auto"),
        ("cuda:0", 0, "CUDA is not available here"),
        ("cuda:2", 2, r"device 'cuda:2': this machine has 2 CUDA device\(s\), cuda:0 to cuda:1"),
    ],
)
def test_a_device_that_is_malformed_or_missing_is_refused_in_one_line(gpus, name, count, match):
    gpus(count)
    with pytest.raises(DeviceError, match=match) as refused:
        resolve_device(name)
    assert isinstance(refused.value, ValueError) and "\n" not in str(refused.value)


@pytest.mark.parametrize("major,dtype", [(8, torch.bfloat16), (9, torch.bfloat16), (7, torch.float32)])
def test_bfloat16_only_on_a_gpu_that_has_it(gpus, major, dtype):
    gpus(2, major)
    assert model_dtype(resolve_device("cuda:1")) == dtype
    assert supports_bf16("cuda:1") == (dtype == torch.bfloat16)
    assert not supports_bf16("cpu") and model_dtype("cpu") == torch.float32


def test_a_bfloat16_checkpoint_runs_in_float32_on_the_cpu(tiny_bf16):
    """transformers loads a checkpoint in its own dtype by default: bfloat16, slow on a CPU."""
    client = TransformersChatClient(str(tiny_bf16), max_new_tokens=4, device="cpu")
    assert client.device == "cpu" and client.model.dtype == torch.float32
    assert len(client.complete([[{"role": "user", "content": "hello"}]])) == 1
    from transformers import AutoModelForCausalLM

    assert load_pretrained(AutoModelForCausalLM, str(tiny_bf16)).dtype == torch.float32  # the trainers'


def test_a_client_refuses_a_device_this_machine_lacks_before_loading(gpus, tmp_path):
    gpus(0)
    with pytest.raises(DeviceError, match="CUDA is not available"):
        TransformersChatClient(str(tmp_path / "no_model_here"), device="cuda")


def test_the_client_spec_names_the_device(gpus, tiny_bf16):
    gpus(0)
    client = client_from_spec(f"hf:{tiny_bf16}?device=cpu")
    assert client.device == "cpu" and client.model.dtype == torch.float32
    assert client_from_spec(f"hf:{tiny_bf16}").device == "cpu"  # auto, without a GPU
    check_spec(f"hf-audio:{tiny_bf16}?device=auto")
    for spec, match in [
        (f"hf:{tiny_bf16}?device=gpu", "device 'gpu': write auto"),
        (f"hf:{tiny_bf16}?device=cuda", "CUDA is not available"),
        (f"hf:{tiny_bf16}?dtype=half", "dtype 'half': choose one of auto, bf16, fp16, fp32"),
        (f"hf-audio:{tiny_bf16}?device", "device '': write auto"),
        (f"hf:{tiny_bf16}?colour=red", "unknown option 'colour'; options: device, dtype"),
        (f"hf:{tiny_bf16}?max_new_tokens=many", "max_new_tokens must be a number"),
        (f"hf:{tiny_bf16}?trust_remote_code=maybe", "trust_remote_code must be true or false"),
        ("hf:?device=cpu", "write hf:<model>"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_spec(spec)


def test_a_bfloat16_load_runs_on_the_cpu(tiny_bf16):
    """``?dtype=bf16`` (``--dtype bf16``) keeps the weights in bfloat16, on a CPU too: half the
    memory of float32, and generation runs."""
    client = client_from_spec(f"hf:{tiny_bf16}?device=cpu&dtype=bf16&max_new_tokens=3")
    assert client.model.dtype == torch.bfloat16 and client.max_new_tokens == 3
    (reply,) = client.complete([[{"role": "user", "content": "hello"}]])
    assert isinstance(reply, str)
