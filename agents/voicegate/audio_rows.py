"""VoiceGate's audio training material (``agents.audio_material``): its items under A+T, each
prompt the audio agent's own chat (``audio_gate_messages``) in parts form naming its clip.

* SFT (``audio_demos``): the gold reply of every train item (``demos.gold_reply``) after the
  chat ``AudioLLMGateAgent`` sends; text-only inputs carry no clip.
* GRPO (the ``voicegate`` audio task): ``grpo_items.item_pairs`` as rows. Paired, a
  speaker-switch command said by the user (x+, target: the tool) and after a speaker switch (x-,
  target: ``[Mute]``): the same words, different audio. Side-talk and self-talk items stay
  ordinary groups. The reward is the text task's, the env's own (``grpo_items.EnvReward``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.audio_material import AUDIO_ACCESS, AudioRows, audio_parts
from agents.llm.parts import clips_of
from agents.training_material import decision_row, seeded_sample
from agents.voicegate.demos import gold_reply
from agents.voicegate.grpo_items import EnvReward, item_pairs, voicegate_families
from agents.voicegate.llm import audio_gate_messages
from hear_gym.core.registry import family
from hear_gym.envs.voicegate.family import ENV_ID
from hear_gym.envs.voicegate.items.generator import all_items


def audio_prompts(
    item_ids: Sequence[str], **env_options: Any
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, np.ndarray]]:
    """Each item's prompt (parts form, naming the item id) and the clips they name, from an A+T
    env made with ``env_options``."""
    env_family = family(ENV_ID)
    ids = list(dict.fromkeys(item_ids))
    env = env_family.make(access=AUDIO_ACCESS, actions="text", item_ids=ids, **env_options)
    prompts, clips = {}, {}
    try:
        for item_id in ids:
            observation, _ = env.reset(options=env_family.reset_options(item_id))
            messages = audio_gate_messages(observation)
            prompts[item_id] = audio_parts(messages, audio_key=item_id)
            if item_clips := clips_of(messages):
                (clip,) = item_clips
                clips[item_id] = clip.copy()  # a view would keep the whole padded buffer
    finally:
        env.close()
    return prompts, clips


# -- SFT ---------------------------------------------------------------------------------------
def audio_sft_rows(item_ids: Sequence[str], **env_options: Any) -> AudioRows:
    """One row per item: its prompt, the gold reply (``completion``, text) and where it came from."""
    items = {item.item_id: item for item in all_items()}
    prompts, clips = audio_prompts(item_ids, **env_options)
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


def check_audio_demos(settings) -> None:
    voicegate_families(settings.families)
    if "split" in settings.env_options:
        raise ValueError("demonstrations come from the 'train' split; do not set split")


def audio_demos(settings) -> AudioRows:
    """``demo_limit`` train items of ``families`` (all three by default), drawn with ``seed``."""
    ids = family(ENV_ID).item_ids("train", voicegate_families(settings.families))
    return audio_sft_rows(seeded_sample(ids, settings.demo_limit, settings.seed), **settings.env_options)


# -- GRPO --------------------------------------------------------------------------------------
def audio_grpo_rows(pairs: Sequence[tuple[str, str]]) -> AudioRows:
    """One row per (x+, x-) pair of ``item_pairs`` (plain: each item with itself), each prompt
    naming its own clip."""
    items = {item.item_id: item for item in all_items()}
    prompts, clips = audio_prompts([i for pair in pairs for i in pair])
    rows = [
        decision_row(prompts[plus], plus, items[plus].family.value, prompts[minus], minus)
        for plus, minus in pairs
    ]
    return rows, clips


def check_audio_task(settings) -> dict[str, Any]:
    families = voicegate_families(settings.families)
    if settings.env_options:
        raise ValueError("env_options are for the hear2act_assent task (VoiceGate's reward is fixed)")
    if settings.paired and "speaker_switch" not in families:
        raise ValueError("paired GRPO pairs speaker-switch commands: include 'speaker_switch'")
    return {}


def build_audio_task(settings, eos_token_ids: set[int]):
    families = voicegate_families(settings.families)
    pairs = item_pairs("train", families, settings.paired, settings.item_limit)
    rows, clips = audio_grpo_rows(pairs)
    return rows, clips, EnvReward({i for pair in pairs for i in pair}, eos_token_ids)
