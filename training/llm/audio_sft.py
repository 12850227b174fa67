"""Post-training an audio-language model on VoiceGate under A+T (audio and transcript): the rows,
supervised fine-tuning on gold replies, and the in-env evaluation both audio trainers share
(``training.llm.audio_grpo`` is the paired GRPO half). Read top to bottom:

1. Rows. Every prompt is the audio agent's own chat (``agents.voicegate.llm.audio_gate_messages``),
   so a model is trained on exactly what ``AudioLLMGateAgent`` later asks it. Arrow stores one type
   per column, so every message content becomes a list of typed parts, and the audio part names its
   clip: ``{"type": "audio", "audio": "<item id>"}``; the clips themselves (16 kHz float arrays) stay
   in a table beside the dataset (``clips``).
2. SFT (``train_audio_sft``): ``AudioSFTCollator`` runs the processor on each row's prompt and clip
   and appends the gold reply's tokens and EOS (``training.llm.demos.gold_reply``); only those are
   labelled, never the prompt or its audio placeholders. TRL's ``SFTTrainer`` trains with the
   collator. LoRA (VoxGate's rank 32, alpha 64) sits on the language model's q/k/v/o only, so the
   audio encoder stays frozen (without LoRA it is frozen explicitly). ``final/`` gets safetensors
   and the processor.
3. The untrained and the trained model play held-out items in env loops through the runner (agent
   ``audio_llm``, client ``hf-audio:<folder>``, access A+T); logs and evaluations go to
   ``curve.jsonl`` and W&B.

Play the result with ``hear-gym eval --cell audio_llm@A+T --llm-client hf-audio:OUT/final``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.training_material import seeded_sample
from agents.voicegate.demos import gold_reply
from agents.voicegate.grpo_items import FAMILIES, voicegate_families
from agents.voicegate.llm import AudioLLMGateAgent, audio_gate_messages
from hear_gym.core.registry import family
from hear_gym.envs.voicegate.items.generator import all_items
from training.llm.common import (
    EvalSettings,
    LoraSettings,
    Player,
    check_model_folder,
    nested_settings,
    run_training,
    sft_arguments,
    trainer_device,
)
from training.llm.run_folder import finish_curve, start_curve

ENV_ID = "hear_gym/VoiceGate-v0"
ACCESS = "A+T"
EVAL_PLAYER = Player("audio_llm", AudioLLMGateAgent, client="hf-audio")  # its gate_agents entry point
SAMPLING_RATE = 16_000
IGNORE = -100

Clips = Mapping[str, np.ndarray]


# -- 1. rows -----------------------------------------------------------------------------------
def audio_chats(item_ids: Sequence[str]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, np.ndarray]]:
    """Each item's prompt (parts form, see module) and the clips it names, from an A+T env."""
    env_family = family(ENV_ID)
    ids = list(dict.fromkeys(item_ids))
    env = env_family.make(access=ACCESS, actions="text", item_ids=ids)
    prompts, clips = {}, {}
    try:
        for item_id in ids:
            observation, _ = env.reset(options=env_family.reset_options(item_id))
            messages, item_clips = audio_gate_messages(observation)
            prompts[item_id] = as_parts(messages, audio_key=item_id)
            if item_clips:
                (clips[item_id],) = item_clips
    finally:
        env.close()
    return prompts, clips


def as_parts(messages: list[dict[str, Any]], audio_key: str) -> list[dict[str, Any]]:
    """The chat with every content a list of typed parts, its audio part naming ``audio_key``."""

    def parts(content):
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return [{**p, "audio": audio_key} if p["type"] == "audio" else p for p in content]

    return [{"role": m["role"], "content": parts(m["content"])} for m in messages]


def audio_keys(prompt: list[dict[str, Any]]) -> list[str]:
    """The clips a prompt names, in order (none for a text-only input)."""
    return [p["audio"] for m in prompt for p in m["content"] if p["type"] == "audio"]


def sft_rows(item_ids: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """One row per item: its prompt, the gold reply (``completion``, text) and where it came from."""
    items = {item.item_id: item for item in all_items()}
    prompts, clips = audio_chats(item_ids)
    rows = [
        {
            "prompt": prompts[i],
            "completion": gold_reply(items[i]),
            "item_id": i,
            "item_family": items[i].family.value,
        }
        for i in item_ids
    ]
    return rows, clips


# -- the processor: one prompt with its clip ---------------------------------------------------
def encode_prompt(processor, prompt: list[dict[str, Any]], clips: Clips) -> dict[str, torch.Tensor]:
    """``input_ids`` (the audio placeholder expanded to its clip's length) and, when the prompt
    has audio, ``input_features`` and ``feature_attention_mask``; batch dimension 1."""
    plain = [
        {
            "role": m["role"],
            "content": [{"type": "audio"} if p["type"] == "audio" else p for p in m["content"]],
        }
        for m in prompt
    ]
    text = processor.apply_chat_template(plain, tokenize=False, add_generation_prompt=True)
    audio = [clips[key] for key in audio_keys(prompt)]
    return dict(processor(text=[text], audio=audio or None, sampling_rate=SAMPLING_RATE, return_tensors="pt"))


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
def load_audio_policy(model: str):
    """(model, processor) from a checkpoint or a LoRA adapter folder (merged into its base)."""
    import transformers

    from agents.llm.clients import base_model_of, load_pretrained, processing_source

    processor = transformers.AutoProcessor.from_pretrained(processing_source(model))
    config = transformers.AutoConfig.from_pretrained(base_model_of(model))
    model_class = getattr(transformers, (config.architectures or ["AutoModel"])[0])
    return load_pretrained(model_class, model), processor


def audio_lora_config(lora: LoraSettings, model):
    """``lora``'s config on the language model's modules only (the audio encoder's attention has
    q/k/v projections too); without LoRA the audio encoder is frozen in place."""
    config = lora.peft_config()
    if config is None:
        model.model.audio_tower.requires_grad_(False)
        return None
    config.target_modules = rf"^model\.language_model\..*\.({'|'.join(lora.targets)})$"
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


@dataclass
class AudioSFTSettings:
    """What ``train_audio_sft`` takes: the model, the item families, LoRA, the optimizer, the
    held-out evaluation (under A+T unless ``evaluation.access`` says A)."""

    out: Path
    model: str  # an audio-language checkpoint (Qwen2-Audio layout) or an adapter over one
    families: tuple[str, ...] = FAMILIES
    demo_limit: int | None = None  # N train items, a seeded sample across the families
    epochs: float = 3.0
    max_steps: int | None = None
    learning_rate: float = 1e-4
    batch_size: int = 8
    gradient_accumulation: int = 1
    lora: LoraSettings = field(default_factory=LoraSettings)
    evaluation: EvalSettings = field(default_factory=EvalSettings)
    device: str = "auto"  # auto, cpu, cuda or cuda:N: where it trains (common.trainer_device)
    seed: int = 0
    wandb_project: str | None = "hear-gym"
    progress: bool = True

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.families = voicegate_families(self.families)
        self.lora, self.evaluation = audio_nested_settings(self.lora, self.evaluation)
        if self.epochs <= 0 or self.learning_rate <= 0:
            raise ValueError("epochs and learning_rate must be > 0")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("max_steps must be >= 1 (or None: train for the epochs)")
        if self.demo_limit is not None and self.demo_limit < 1:
            raise ValueError("demo_limit must be >= 1 (or None: every train item)")
        for name in ("batch_size", "gradient_accumulation"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        trainer_device(self.device)  # a device this machine lacks: refused now
        self.model = check_model_folder(self.model)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "out": str(self.out)}


def audio_nested_settings(
    lora, evaluation, env_options: Mapping[str, Any] = {}
) -> tuple[LoraSettings, EvalSettings]:
    """LoRA and evaluation settings from dicts or as given, the evaluation resolved to A+T with
    ``env_options`` (unless it names its own)."""
    lora, evaluation = nested_settings(lora, evaluation)
    if evaluation.access not in (None, "A", ACCESS):
        raise ValueError(f"an audio model is evaluated under A or {ACCESS}, not {evaluation.access!r}")
    return lora, evaluation.resolved(ACCESS, dict(env_options))


def sft_items(settings: AudioSFTSettings) -> list[str]:
    return seeded_sample(
        family(ENV_ID).episode_ids("train", settings.families), settings.demo_limit, settings.seed
    )


def make_sft_trainer(settings: AudioSFTSettings, rows, clips: Clips, callbacks=()):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    model, processor = load_audio_policy(settings.model)
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
    """Audio SFT on VoiceGate's gold replies under A+T; the saved folder and the metrics."""
    settings = AudioSFTSettings(**settings)
    curve = start_curve(settings.out, settings.to_json(), ENV_ID, settings.wandb_project)
    try:
        rows, clips = sft_rows(sft_items(settings))
        trainer = make_sft_trainer(settings, rows, clips, callbacks=[curve])
        result = run_training(
            trainer, curve, settings.model, ENV_ID, settings.evaluation, settings.seed, EVAL_PLAYER
        )
    finally:
        finish_curve(curve)
    return {**result, "demos": len(rows)}


# -- 3. evaluation in env loops ----------------------------------------------------------------
