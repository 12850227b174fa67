"""Post-training an audio-language model under A+T (audio and transcript): supervised
fine-tuning on a family's audio demonstrations, and what both audio trainers share (the processor
on a row's prompt and clip, the model and its LoRA, the in-env evaluation; ``training.llm.audio_grpo``
is the GRPO half). Read top to bottom:

1. Rows. The env's family declares its audio demonstrations in its training material
   (``agents.audio_material.AudioDemoSource``; VoiceGate: the gold reply of every item after its
   audio agent's chat): each prompt is the family's audio agent's own chat in parts form, its
   audio part naming its clip, and the clips (16 kHz float arrays) stay in a table beside the
   dataset (``clips``).
2. SFT (``train_audio_sft``): ``AudioSFTCollator`` runs the processor on each row's prompt and clip
   and appends the reply's tokens and EOS; only those are labelled, never the prompt or its audio
   placeholders. TRL's ``SFTTrainer`` trains with the collator. LoRA (VoxGate's rank 32, alpha 64)
   sits on the language model's q/k/v/o only, so the audio encoder stays frozen (without LoRA it
   is frozen explicitly). ``final/`` gets safetensors and the processor.
3. The untrained and the trained model play held-out episodes in env loops through the runner
   (the family's ``audio_chat_agent``, entry point ``audio_llm``, client ``hf-audio:<folder>``,
   access A+T); logs and evaluations go to ``curve.jsonl`` and W&B.

Play the result with ``hear-gym eval --env ENV --cell audio_llm@A+T --llm-client hf-audio:OUT/final``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from agents.audio_material import (
    AUDIO_ACCESS,
    SAMPLING_RATE,
    AudioDemoSource,
    AudioRows,
    Clips,
    audio_keys,
)
from agents.llm.parts import template_messages
from agents.training_material import envs_with, training_material
from training.llm.common import (
    EvalSettings,
    LoraSettings,
    Player,
    client_options,
    nested_settings,
    sft_arguments,
    training_dtype,
)
from training.llm.evaluation import run_training
from training.llm.run_folder import finish_curve, start_curve
from training.llm.settings import SFTBaseSettings

AUDIO_EVAL_AGENT = "audio_llm"  # the entry-point name of the family's audio_chat_agent
IGNORE = -100


# -- 1. what the family gives ------------------------------------------------------------------
def audio_demo_source(env_id: str) -> AudioDemoSource:
    """The audio demonstration source ``env_id``'s family declares in its training material."""
    source = training_material(env_id).audio_demos
    if source is None:
        raise ValueError(f"audio SFT demonstrations exist for {envs_with('audio_demos')}, not {env_id!r}")
    return source


def audio_player(env_id: str) -> Player:
    """Who plays a saved audio model on ``env_id``: its family's ``audio_chat_agent``."""
    agent = training_material(env_id).audio_chat_agent
    if agent is None:
        raise ValueError(
            f"an audio chat agent plays saved audio models on {envs_with('audio_chat_agent')}, not {env_id!r}"
        )
    return Player(AUDIO_EVAL_AGENT, agent, client="hf-audio")


# -- the processor: one prompt with its clip ---------------------------------------------------
def encode_prompt(processor, prompt: list[dict[str, Any]], clips: Clips) -> dict[str, torch.Tensor]:
    """``input_ids`` (each audio placeholder expanded to its clip's length) and, when the prompt
    has audio, ``input_features`` and ``feature_attention_mask``; batch dimension 1. The template
    reads each part with its own keys only (a row from a table carries the others' as nulls) and
    must render one placeholder per clip the prompt names."""
    text = processor.apply_chat_template(
        template_messages(prompt), tokenize=False, add_generation_prompt=True
    )
    audio = [clips[key] for key in audio_keys(prompt)]
    encoded = processor(text=[text], audio=audio or None, sampling_rate=SAMPLING_RATE, return_tensors="pt")
    return dict(encoded)


def stack_audio(encoded: Sequence[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The features of a batch, in row order (rows without audio contribute none)."""
    with_audio = [e for e in encoded if "input_features" in e]
    if not with_audio:
        return {}
    return {
        key: torch.cat([e[key] for e in with_audio]) for key in ("input_features", "feature_attention_mask")
    }


def pad_right(rows: Sequence[list[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows])


# -- model and LoRA ----------------------------------------------------------------------------
def load_audio_policy(model: str, dtype: str = "auto", trust_remote_code: bool = False):
    """(model, processor) from a checkpoint or a LoRA adapter folder (merged into its base): the
    model class the checkpoint's config names (an Omni checkpoint's thinker), the weights in
    ``dtype``'s training type (``common.training_dtype``)."""
    from agents.llm.loading import load_audio_model, load_processor

    processor = load_processor(model, trust_remote_code)
    return load_audio_model(model, training_dtype(dtype), trust_remote_code), processor


def audio_policy_loader(settings):
    """``load_audio_policy`` with a trainer's ``dtype`` and ``trust_remote_code``."""
    return functools.partial(
        load_audio_policy, dtype=settings.dtype, trust_remote_code=settings.trust_remote_code
    )


def module_name(model, module) -> str:
    """The qualified name of ``module`` inside ``model``."""
    return next(name for name, candidate in model.named_modules() if candidate is module)


def encoders(model) -> list:
    """The model's audio and vision encoders (``get_encoder`` by modality), found in the model,
    never assumed at a path."""
    found = []
    for modality in ("audio", "image"):
        encoder = model.get_encoder(modality=modality)
        if encoder is not model and all(encoder is not f for f in found):
            found.append(encoder)
    if not found:
        raise ValueError(f"{type(model).__name__} has no audio encoder that transformers can find")
    return found


def audio_lora_config(lora: LoraSettings, model):
    """``lora``'s config on the language model's modules only (the audio encoder's attention has
    q/k/v projections too); the language model is the one ``get_decoder`` finds (``model.language_model``
    in Qwen2-Audio, ``model.language_model`` in an Omni thinker), never assumed at a path.
    Without LoRA the encoders are frozen in place."""
    config = lora.peft_config()
    if config is None:
        for encoder in encoders(model):
            encoder.requires_grad_(False)
        return None
    decoder = re.escape(module_name(model, model.get_decoder()))
    config.target_modules = rf"^{decoder}\..*\.({'|'.join(lora.targets)})$"
    return config


# -- 2. SFT ------------------------------------------------------------------------------------
@dataclass
class AudioSFTCollator:
    """Rows ``prompt`` (parts) + ``completion`` (the reply text) to a batch: the prompt with its
    clip through the processor, then the reply's tokens and EOS, right-padded. Labels are the
    reply and EOS; prompt, audio placeholders and padding are ``-100``."""

    processor: Any
    clips: Clips

    def __call__(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        tokenizer = self.processor.tokenizer
        encoded = [encode_prompt(self.processor, row["prompt"], self.clips) for row in rows]
        ids, labels = [], []
        for row, e in zip(rows, encoded, strict=True):
            prompt = e["input_ids"][0].tolist()
            reply = tokenizer(row["completion"], add_special_tokens=False)["input_ids"] + [
                tokenizer.eos_token_id
            ]
            ids.append(prompt + reply)
            labels.append([IGNORE] * len(prompt) + reply)
        batch = {
            "input_ids": pad_right(ids, tokenizer.pad_token_id),
            "attention_mask": pad_right([[1] * len(r) for r in ids], 0),
            "labels": pad_right(labels, IGNORE),
        }
        return {**batch, **stack_audio(encoded)}


@dataclass(kw_only=True)
class AudioSFTSettings(SFTBaseSettings):
    """What ``train_audio_sft`` takes: ``SFTBaseSettings`` on an audio-language checkpoint
    (Qwen2-Audio layout) or an adapter over one, an env whose family declares ``audio_demos``
    and its A+T env options, and the source's item families; evaluated under A+T unless
    ``evaluation.access`` says A."""

    families: tuple[str, ...] | None = None  # the source's item families; None: its default

    DEMOS = "audio_demos"

    def check(self) -> None:
        super().check()
        self.families = None if self.families is None else tuple(self.families)
        source = audio_demo_source(self.env_id)
        audio_player(self.env_id)  # a family without an audio agent cannot evaluate what it trains
        self.lora, self.evaluation = audio_nested_settings(self.lora, self.evaluation, self.env_options)
        source.check(self)


def audio_nested_settings(
    lora, evaluation, env_options: Mapping[str, Any] = {}
) -> tuple[LoraSettings, EvalSettings]:
    """LoRA and evaluation settings from dicts or as given, the evaluation resolved to A+T with
    ``env_options`` (unless it names its own)."""
    lora, evaluation = nested_settings(lora, evaluation)
    if evaluation.access not in (None, "A", AUDIO_ACCESS):
        raise ValueError(f"an audio model is evaluated under A or {AUDIO_ACCESS}, not {evaluation.access!r}")
    return lora, evaluation.resolved(AUDIO_ACCESS, dict(env_options))


def demo_rows(settings: AudioSFTSettings) -> AudioRows:
    """The rows SFT trains on and the clips they name: the env's family's audio demonstrations."""
    return audio_demo_source(settings.env_id).build(settings)


def make_sft_trainer(settings: AudioSFTSettings, rows, clips: Clips, callbacks=()):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    model, processor = audio_policy_loader(settings)(settings.model)
    config = SFTConfig(
        **sft_arguments(settings),
        dataset_kwargs={"skip_prepare_dataset": True},  # the collator tokenizes, with the audio
        remove_unused_columns=False,
        max_length=None,  # cutting a prompt would cut its audio placeholders
    )
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=processor,
        data_collator=AudioSFTCollator(processor, clips),
        peft_config=audio_lora_config(settings.lora, model),
        callbacks=list(callbacks),
    )


def train_audio_sft(**settings: Any) -> dict[str, Any]:
    """Audio SFT under A+T on the env's audio demonstrations; the saved folder and the metrics."""
    settings = AudioSFTSettings(**settings)
    curve = start_curve(settings.out, settings.to_json(), settings.env_id, settings.wandb_project)
    try:
        rows, clips = demo_rows(settings)
        trainer = make_sft_trainer(settings, rows, clips, callbacks=[curve])
        result = run_training(
            trainer,
            curve,
            settings.model,
            settings.env_id,
            settings.evaluation,
            settings.seed,
            audio_player(settings.env_id),
            client=client_options(settings, settings.device),
        )
    finally:
        finish_curve(curve)
    return {**result, "demos": len(rows)}
