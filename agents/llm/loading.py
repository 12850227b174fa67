"""Loading a checkpoint for the chat clients and the trainers: where it is, in which dtype, with
which model class and processor, and whether its own code may run.

* Where: a local folder or a hub id already in the Hugging Face cache (nothing is downloaded),
  or a LoRA adapter folder over such a model (``base_model_of``), merged for inference.
* dtype (``DTYPES``): ``auto`` is bfloat16 on a GPU that computes in it and float32 elsewhere;
  ``bf16``, ``fp16`` and ``fp32`` load the weights in that type (a bfloat16 load halves the
  memory and runs on a CPU too, slowly). Never the checkpoint's own dtype by accident.
* Model class (``audio_model_class``): found from the checkpoint's config, never assumed. An
  Omni checkpoint (a ``thinker_config``: Qwen2.5-Omni, whose hub config names the retired class
  ``Qwen2_5OmniModel``) loads its thinker alone, the part that hears and writes text; the talker
  and token2wav, which speak, stay on disk.
* Processor (``load_processor``): the checkpoint's. transformers 5 builds Qwen2.5-Omni's only with
  torchvision (its video processor); without torchvision an audio-and-text processor is built
  from the checkpoint's tokenizer, feature extractor and chat template
  (``agents.llm.audio_text_processor``), which is all a hear_gym prompt uses.
* Remote code: a checkpoint whose config or tokenizer names its own code (``auto_map``) loads
  only with ``trust_remote_code`` (``--trust-remote-code``: that code then runs here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DTYPES = ("auto", "bf16", "fp16", "fp32")
DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


class ChatClientError(RuntimeError):
    pass


def check_dtype(name: str) -> str:
    if name not in DTYPES:
        raise ValueError(f"dtype {name!r}: choose one of {', '.join(DTYPES)}")
    return name


def torch_dtype(name: str, device: str):
    """The torch dtype weights load in for inference on ``device`` (``agents.device``)."""
    import torch

    from agents.device import model_dtype

    check_dtype(name)
    return model_dtype(device) if name == "auto" else getattr(torch, DTYPE_NAMES[name])


def locate_model(name: str) -> str:
    """``name`` if it is a local model folder or a hub id already in the local Hugging Face
    cache; nothing is ever downloaded, so anything else is a clear error before loading."""
    if Path(name).is_dir():
        return name
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except ValueError:  # not even a valid hub id
        cached = None
    if not isinstance(cached, str):
        raise ChatClientError(
            f"model {name!r} is neither a local folder nor in the Hugging Face cache "
            "(no downloads here): pass the folder that holds the checkpoint"
        )
    return name


def is_adapter(name: str) -> bool:
    """Whether ``name`` is a LoRA adapter folder (peft's ``adapter_config.json``)."""
    return (Path(name) / "adapter_config.json").is_file()


def base_model_of(name: str) -> str:
    """The checkpoint itself, or an adapter's base model; either must be on this machine."""
    if not is_adapter(name):
        return locate_model(name)
    base = json.loads((Path(name) / "adapter_config.json").read_text(encoding="utf-8"))[
        "base_model_name_or_path"
    ]
    try:
        return locate_model(base)
    except ChatClientError as exc:
        raise ChatClientError(f"adapter {name}: its base model cannot be loaded: {exc}") from None


def processing_source(name: str) -> str:
    """Where the tokenizer or processor lives: the checkpoint, or an adapter folder when the
    trainer saved one there, else the adapter's base model."""
    if not is_adapter(name):
        return locate_model(name)
    if any((Path(name) / f).is_file() for f in ("tokenizer_config.json", "processor_config.json")):
        return name
    return base_model_of(name)


def remote_code(folder: str) -> list[str]:
    """The ``auto_map`` entries (code shipped with the checkpoint) its config, tokenizer or
    processor files name; read as JSON, never run."""
    names = []
    for file in ("config.json", "tokenizer_config.json", "processor_config.json", "preprocessor_config.json"):
        path = Path(folder) / file
        if path.is_file():
            names += list(json.loads(path.read_text(encoding="utf-8")).get("auto_map", {}))
    return names


def check_remote_code(name: str, trust_remote_code: bool) -> None:
    """A one-line ``ChatClientError`` when ``name`` (or its adapter's base, or its processor
    folder) ships code and ``trust_remote_code`` is off."""
    if trust_remote_code:
        return
    for folder in dict.fromkeys((base_model_of(name), processing_source(name))):
        if Path(folder).is_dir() and (entries := remote_code(folder)):
            raise ChatClientError(
                f"model {name}: {folder} ships its own code ({', '.join(sorted(set(entries)))}); "
                "loading it runs that code: pass --trust-remote-code (trust_remote_code=true) if you trust it"
            )


def load_pretrained(model_class, name: str, dtype=None, trust_remote_code: bool = False, **kwargs):
    """``model_class.from_pretrained`` on a checkpoint, or on a LoRA adapter folder (peft's
    ``adapter_config.json``): its base model with the adapter merged in for inference. The weights
    load in ``dtype``, float32 by default (what the trainers train, autocasting to bfloat16 on a
    GPU), never in the checkpoint's own dtype (transformers' default), which is bfloat16 for most
    released models and slow on a CPU."""
    import torch

    from agents.extras import import_extra

    check_remote_code(name, trust_remote_code)
    options = {"dtype": dtype or torch.float32, "trust_remote_code": trust_remote_code, **kwargs}
    base = base_model_of(name)
    if base == name:
        return model_class.from_pretrained(base, **options)
    peft = import_extra("peft", "train", f"the LoRA adapter {name}")
    return peft.PeftModel.from_pretrained(
        model_class.from_pretrained(base, **options), name
    ).merge_and_unload()


# -- audio-language models ---------------------------------------------------------------------
def audio_model_class(name: str, trust_remote_code: bool = False) -> tuple[Any, dict[str, Any]]:
    """(model class, extra ``from_pretrained`` arguments) that load ``name``'s text-writing model:
    the class its config names, or, for an Omni checkpoint, its thinker alone (its config and its
    weights under ``thinker.``)."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(base_model_of(name), trust_remote_code=trust_remote_code)
    thinker = getattr(config, "thinker_config", None)
    if thinker is not None:
        class_name = type(thinker).__name__.replace("Config", "ForConditionalGeneration")
        return _transformers_class(class_name, name), {"config": thinker, "key_mapping": {r"^thinker\.": ""}}
    if trust_remote_code and getattr(config, "auto_map", None):
        return transformers.AutoModelForCausalLM, {}
    for class_name in config.architectures or ():
        if hasattr(transformers, class_name):
            return getattr(transformers, class_name), {}
    raise ChatClientError(
        f"model {name}: transformers {transformers.__version__} has none of its architectures "
        f"{config.architectures}; a newer transformers, or --trust-remote-code for a checkpoint that ships its code"
    )


def _transformers_class(class_name: str, name: str):
    import transformers

    if not hasattr(transformers, class_name):
        raise ChatClientError(f"model {name}: transformers {transformers.__version__} has no {class_name}")
    return getattr(transformers, class_name)


def load_audio_model(name: str, dtype=None, trust_remote_code: bool = False):
    """The audio-language model of a checkpoint or adapter (``audio_model_class``), merged."""
    model_class, options = audio_model_class(name, trust_remote_code)
    return load_pretrained(model_class, name, dtype, trust_remote_code, **options)


def load_processor(name: str, trust_remote_code: bool = False):
    """The checkpoint's processor, or, where transformers cannot build it without torchvision
    (Qwen2.5-Omni's video processor), its audio-and-text part (``AudioTextProcessor``)."""
    import transformers

    source = processing_source(name)
    check_remote_code(name, trust_remote_code)
    try:
        return transformers.AutoProcessor.from_pretrained(source, trust_remote_code=trust_remote_code)
    except (ImportError, AttributeError) as exc:
        if transformers.is_torchvision_available() or not _needs_torchvision(exc):
            raise
    from agents.llm.audio_text_processor import AudioTextProcessor

    return AudioTextProcessor.from_checkpoint(source)


def _needs_torchvision(exc: Exception) -> bool:
    # transformers 5 raises an ImportError naming Torchvision, or fails on the placeholder class
    # it registers for a video processor it cannot import
    return "orchvision" in str(exc) or "VIDEO_PROCESSOR_MAPPING" in str(exc)
