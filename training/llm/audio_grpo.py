"""Paired GRPO for an audio-language model under A+T, the pair differing only in the waveform
(VoxGate Eq. 1 through ``training.llm.paired_grpo``). Read top to bottom:

1. Rows. A family declares its audio GRPO tasks in its training material
   (``agents.audio_material.AudioDecisionTask``; ``task`` names one): VoiceGate's ``voicegate``,
   one row per speaker-switch command, its same-speaker input (x+, target: the tool) and its
   switched input (x-, target: ``[Mute]``), the same words, different audio, side-talk and
   self-talk rows ordinary groups; Hear2Act's ``hear2act_assent``, one row per assent pair, the
   same transcript said with genuine (x+) and reluctant (x-) acceptance. Each prompt names its
   own clip (parts form), so ``paired_grpo.minus_side``, which swaps the prompt, swaps the audio
   with it.
2. TRL's ``GRPOTrainer`` has no audio path. ``AudioGRPOMixin`` tokenizes each row with the
   processor and its own clip (generation gets ``input_features``), carries each row's audio key
   in the generation batch (shuffled and split with the rows), and gives every scoring and loss
   forward the features of its rows' clips. ``AudioPairedGRPOTrainer`` is that on
   ``PairedGRPOTrainer``; ``AudioGRPOTrainer`` on plain ``GRPOTrainer``.
3. The reward is the task's (the text task's, which does not depend on the audio: VoiceGate's
   env rule reward of the reply; Hear2Act's env return when the state-aware agent finishes the
   dialogue). Generation runs in transformers.
4. ``final/`` (safetensors and the processor; an adapter over the run's ``start/`` when the
   model was an SFT adapter, see ``training.llm.start_model``) and the base model play held-out
   episodes with the family's audio agent (``audio_llm@A+T``) under the task's evaluation options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from trl import GRPOTrainer

from agents.audio_material import Clips, audio_keys
from agents.training_material import audio_grpo_task
from training.llm.audio_sft import (
    IGNORE,
    audio_lora_config,
    audio_nested_settings,
    audio_player,
    audio_policy_loader,
    encode_prompt,
    stack_audio,
)
from training.llm.common import client_options, grpo_arguments
from training.llm.evaluation import run_training
from training.llm.grpo import end_of_turn_ids
from training.llm.paired_grpo import PairedGRPOTrainer
from training.llm.run_folder import finish_curve, start_curve
from training.llm.settings import GRPOBaseSettings
from training.llm.start_model import start_folder


# -- 2. the trainers -------------------------------------------------------------------------------
class AudioGRPOMixin:
    """What a ``GRPOTrainer`` needs to hear: each row's prompt is tokenized with its own clip
    (generation receives ``input_features``); each row's audio key travels in the generation
    batch (``audio_keys``, shuffled and split with the rows); every forward that scores
    completions gets the features of its rows' clips. Features are computed once per clip."""

    def __init__(self, *args, clips: Clips, **kwargs) -> None:
        self.clips = clips
        self.features: dict[str, dict[str, torch.Tensor]] = {}  # audio key -> its processor features
        self.forward_keys: list[str | None] = []  # the audio of each row of the forward running now
        super().__init__(*args, **kwargs)

    def _tokenize_prompts(self, prompts):
        ids, keys = [], []
        for prompt in prompts:
            encoded = encode_prompt(self.processing_class, prompt, self.clips)
            ids.append(encoded["input_ids"][0].tolist())
            (key,) = audio_keys(prompt) or [None]
            if key is not None:
                self.features.setdefault(key, {k: v for k, v in encoded.items() if "feature" in k})
            keys.append(key)
        self.forward_keys = keys  # the scoring forwards of this batch (old policy, reference)
        device = self.accelerator.device
        return ids, None, {k: v.to(device) for k, v in self.audio_inputs(keys).items()}

    def audio_inputs(self, keys: Sequence[str | None]) -> dict[str, torch.Tensor]:
        """The model's audio inputs for rows whose clips are ``keys`` (in row order)."""
        return stack_audio([self.features[k] for k in keys if k is not None])

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        output["audio_keys"] = list(self.forward_keys)
        return output

    def _compute_loss(self, model, inputs):
        self.forward_keys = list(inputs["audio_keys"])
        return super()._compute_loss(model, inputs)

    def _get_per_token_logps_and_entropies(
        self,
        model,
        input_ids,
        attention_mask,
        logits_to_keep,
        batch_size=None,
        compute_entropy=False,
        compute_aux_loss=False,
        **_,
    ):
        """TRL's chunked scoring loop (text part), each chunk with its rows' audio."""
        batch_size = batch_size or input_ids.size(0)
        logps, entropies, aux = [], [], []
        for start in range(0, input_ids.size(0), batch_size):
            ids, mask = input_ids[start : start + batch_size], attention_mask[start : start + batch_size]
            audio = self.audio_inputs(self.forward_keys[start : start + batch_size])
            labels = ids.masked_fill(mask == 0, IGNORE)
            labels[:, :-logits_to_keep] = IGNORE  # only completion tokens are scored
            extra = {"output_router_logits": True} if compute_aux_loss else {}
            with self.accelerator.autocast():
                outputs = model(
                    input_ids=ids,
                    attention_mask=mask,
                    **{k: v.to(ids.device) for k, v in audio.items()},
                    labels=labels,
                    fused_lm_head=True,
                    **extra,
                )
            logps.append(outputs.log_probs[:, -logits_to_keep:])
            if compute_entropy:
                entropies.append(outputs.entropy[:, -logits_to_keep:])
            if compute_aux_loss:
                aux.append(outputs.aux_loss)
        return (
            torch.cat(logps),
            torch.cat(entropies) if compute_entropy else None,
            torch.stack(aux).mean() if compute_aux_loss else None,
        )


class AudioGRPOTrainer(AudioGRPOMixin, GRPOTrainer):
    """GRPO for an audio-language model: ordinary groups, each completion hearing its row's clip."""


class AudioPairedGRPOTrainer(AudioGRPOMixin, PairedGRPOTrainer):
    """Paired-group GRPO (VoxGate Eq. 1) for an audio-language model: the K/2 completions of x+
    hear the same-speaker clip and the K/2 of x- the switched one; the words are the same."""


@dataclass(kw_only=True)
class AudioGRPOSettings(GRPOBaseSettings):
    """``GRPOBaseSettings`` for an audio-language checkpoint (Qwen2-Audio layout) or an SFT
    adapter over one, under A+T; paired by default. Generation runs in transformers (no vLLM:
    it has no audio path here)."""

    paired: bool = True

    TASKS = "audio_grpo_tasks"

    def check(self) -> None:
        super().check()
        env_id, task = audio_grpo_task(self.task)
        audio_player(env_id)  # a family without an audio agent cannot evaluate what it trains
        self.env_options = task.check(self)
        self.lora, self.evaluation = audio_nested_settings(
            self.lora, self.evaluation, task.eval_options(self.env_options)
        )


def placeholder_ids(config) -> list[int]:
    """The token ids a checkpoint's config names as placeholders of its inputs' features (audio,
    image, video): a sampled one would stand for features that are not there."""
    names = ("audio_token_id", "image_token_id", "video_token_id")
    ids = [getattr(config, name, None) for name in names]
    found = [i for i in ids if isinstance(i, int)]
    if not found:
        raise ValueError(f"{type(config).__name__} names no audio placeholder token ({', '.join(names)})")
    return sorted(set(found))


def make_grpo_trainer(settings: AudioGRPOSettings, rows, clips: Clips, reward, policy, callbacks=()):
    from datasets import Dataset
    from trl import GRPOConfig

    model, processor = policy
    placeholders = placeholder_ids(model.config)
    config = GRPOConfig(**grpo_arguments(settings), generation_kwargs={"suppress_tokens": placeholders})
    trainer_class = AudioPairedGRPOTrainer if settings.paired else AudioGRPOTrainer
    # TRL looks up ``config.image_token_id`` for a processor's model (to suppress it, which
    # ``generation_kwargs`` above does for every placeholder); an audio-only config has none.
    borrowed = not hasattr(model.config, "image_token_id")
    if borrowed:
        model.config.image_token_id = placeholders[0]
    try:
        return trainer_class(
            model=model,
            processing_class=processor,
            reward_funcs=[reward],
            args=config,
            train_dataset=Dataset.from_list(rows),
            peft_config=audio_lora_config(settings.lora, model),
            callbacks=list(callbacks),
            clips=clips,
        )
    finally:
        if borrowed:
            del model.config.image_token_id  # the saved config stays the checkpoint's


def train_audio_grpo(**settings: Any) -> dict[str, Any]:
    """Audio (paired) GRPO under A+T on the settings' task with its env reward; folder, metrics,
    timing."""
    settings = AudioGRPOSettings(**settings)
    env_id, task = audio_grpo_task(settings.task)
    curve = start_curve(settings.out, settings.to_json(), env_id, settings.wandb_project)
    try:
        load = audio_policy_loader(settings)
        start = start_folder(settings.model, settings.out, load, settings.device)  # an SFT adapter, merged
        policy = load(start)
        rows, clips, reward = task.build(settings, end_of_turn_ids(policy[0], policy[1].tokenizer))
        trainer = make_grpo_trainer(settings, rows, clips, reward, policy, callbacks=[curve])
        result = run_training(
            trainer,
            curve,
            start,
            env_id,
            settings.evaluation,
            settings.seed,
            audio_player(env_id),
            reward,
            client=client_options(settings, settings.device),
        )
    finally:
        finish_curve(curve)
    return {**result, "rows": len(rows)}
