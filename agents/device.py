"""Where a model runs: one resolver for every trainer's ``--device`` and every ``hf:`` client.

``auto`` is the first CUDA device when torch sees one, else the CPU; ``cpu``; ``cuda`` (the first
visible GPU, ``cuda:0``); ``cuda:N``. ``CUDA_VISIBLE_DEVICES`` decides which GPUs are visible.
Models on a GPU that supports bfloat16 (compute capability 8 and up, or ROCm) run in bfloat16,
everywhere else in float32. torch is imported only when a GPU is asked about.
"""

from __future__ import annotations

import re

DEVICE_FORMS = "auto, cpu, cuda or cuda:N"
_DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")


class DeviceError(ValueError):
    """A device that is malformed, or that this machine does not have."""


def resolve_device(name: str) -> str:
    """``"cpu"`` or ``"cuda:N"`` for ``name`` (one of ``DEVICE_FORMS``); ``DeviceError`` for a
    malformed name, CUDA asked for where torch has none, or a GPU index this machine lacks."""
    if not isinstance(name, str) or not _DEVICE_PATTERN.fullmatch(name):
        raise DeviceError(f"device {name!r}: write {DEVICE_FORMS} (N: a GPU index)")
    if name == "cpu":
        return name
    import torch

    if not torch.cuda.is_available():
        if name == "auto":
            return "cpu"
        build = "a CPU-only build" if torch.version.cuda is None else "no GPU visible"
        raise DeviceError(
            f"device {name!r}: CUDA is not available here (torch {torch.__version__}, {build}); "
            "use cpu or auto"
        )
    index = int(name.partition(":")[2] or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise DeviceError(
            f"device {name!r}: this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}"
        )
    return f"cuda:{index}"


def supports_bf16(device: str) -> bool:
    """Whether ``device`` (as ``resolve_device`` returns it) computes in bfloat16 natively."""
    if device == "cpu":
        return False
    import torch

    if torch.version.hip:  # every ROCm GPU torch runs on has bfloat16
        return True
    return torch.cuda.get_device_capability(device)[0] >= 8


def model_dtype(device: str):
    """The torch dtype a model loads in for inference on ``device``: bfloat16 where it is native,
    else float32 (CPUs, older GPUs)."""
    import torch

    return torch.bfloat16 if supports_bf16(device) else torch.float32
