"""The model a post-training run starts from, so that every folder it saves loads as the model
it trained.

A trainer given a LoRA adapter (an SFT run's ``final/``: GRPO after SFT, or a second SFT) trains
the adapter's base with the adapter merged in. TRL puts a fresh LoRA on the model it is handed and saves that adapter
(``final/``, ``checkpoints/step_N``, TRL's own checkpoints) naming the model's ``name_or_path`` as
its base; a model merged in memory keeps its base checkpoint's path there, so the saved adapter
would load on the raw base, without the SFT. ``start_folder`` therefore writes the merged model
into the run folder (``start/``: safetensors and its tokenizer or processor) and the trainer loads
it from there: every adapter the run saves names ``start/`` as its base, and
``agents.llm.loading.load_pretrained`` (what ``hear-gym eval --llm-client hf:`` / ``hf-audio:``
loads with) gives start + adapter, the SFT included. A full checkpoint is used where it is.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.llm.loading import is_adapter
from training.llm.common import device_arguments, training_dtype
from training.llm.run_folder import main_process

START_DIR = "start"


def load_text_model(model: str, dtype: str = "auto", trust_remote_code: bool = False):
    """(model, tokenizer) from a checkpoint or a LoRA adapter (merged into its base), the weights
    in ``dtype``'s training type (``common.training_dtype``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.llm.loading import load_pretrained, processing_source

    tokenizer = AutoTokenizer.from_pretrained(processing_source(model), trust_remote_code=trust_remote_code)
    return load_pretrained(AutoModelForCausalLM, model, training_dtype(dtype), trust_remote_code), tokenizer


def text_model_loader(settings) -> Callable[[str], tuple[Any, Any]]:
    """``load_text_model`` with a trainer's ``dtype`` and ``trust_remote_code``."""
    return functools.partial(
        load_text_model, dtype=settings.dtype, trust_remote_code=settings.trust_remote_code
    )


def start_folder(model: str, out: Path, load: Callable[[str], tuple[Any, Any]], device: str = "auto") -> str:
    """Where the run loads its model from: ``model`` itself, or, for a LoRA adapter, the run
    folder's ``start/`` holding ``load(model)`` (the adapter merged into its base, and the
    tokenizer or processor). ``device`` is where the run trains
    (``common.trainer_device``). The main process writes it once (a resumed run reuses it); the
    other processes of a distributed launch wait for it."""
    if not is_adapter(model):
        return model
    from accelerate import PartialState

    start = (Path(out) / START_DIR).resolve()  # recorded in the adapters: absolute
    # the launch's processes, on the device TRL will train on (a CPU launch is seen only so)
    with PartialState(cpu=device_arguments(device)["use_cpu"]).main_process_first():
        if main_process() and not start.is_dir():
            _write_model(start, *load(model))
    return str(start)


def _write_model(folder: Path, model, processing) -> None:
    """``model`` and its tokenizer or processor saved into ``folder``, which appears whole or
    not at all (written beside it, then renamed)."""
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)  # an earlier write that was interrupted
    model.save_pretrained(partial)  # safetensors
    processing.save_pretrained(partial)
    os.replace(partial, folder)
