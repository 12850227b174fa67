"""Hear2Act assent pairs for an audio-language model: the two sides of a pair differ only in the
waveform (the ``hear2act_assent`` audio GRPO task of Hear2Act's training material).

A pair (``assent_pairs``) is one transcript at an assent turn, said by a user who genuinely
accepts the current option (x+) and by one who accepts it reluctantly (x-). A text model sees the
difference only through a state channel (T+S, T+S^); an audio model hears it in the delivery of
the shared acceptance words.

1. Rows (``assent_rows``): each side is replayed in an A+T env (prosody feedback, text actions,
   the run's env options, so its renderer and plan table), and its prompt is exactly what
   ``agents.hear2act.llm.AudioLLMAgent`` is asked there: ``audio_messages`` for the spoken
   assistant, in ``agents.audio_material``'s parts form with the side's item id naming its clip,
   and the clip the agent hears (``heard_audio``: the assent turn). Building checks that the two
   sides have the same chat (transcript and options) and different clips. The rows have
   ``pair_rows``' schema (x+ in ``prompt``, x- in ``prompt_minus``).
2. The reward is ``AssentReward``, the text task's: the reply is stepped at the side's decision
   point, ``state_aware@T+S`` finishes the dialogue, and the env's return is the reward; the env
   options (``reward``, ``turn_cost``, ...) go to it as in the text task.
3. The trained model plays whole held-out Hear2Act dialogues as ``audio_llm@A+T`` under prosody
   feedback with the same env options (the task's ``eval_options``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.audio_material import AUDIO_ACCESS, AudioRows, audio_parts
from agents.hear2act.assent_pairs import AssentPair, AssentReward, Replay, assent_pairs, replayed_rows
from agents.hear2act.llm import AUDIO_ASSISTANT
from agents.hear2act.prompts import audio_messages
from agents.llm.parts import clips_of
from hear_gym.envs.hear2act.user.states import Feedback


def assent_rows(pairs: list[AssentPair], paired: bool = True, **env_options: Any) -> AudioRows:
    """One row per pair (each side its own row when not ``paired``), each prompt naming its side's
    clip, and the clips by item id; ``env_options`` go to the A+T replay env."""
    chats: dict[str, list[dict[str, Any]]] = {}
    clips: dict[str, np.ndarray] = {}

    def prompt(observation: dict[str, Any], item_id: str) -> list[dict[str, Any]]:
        messages = audio_messages(observation, AUDIO_ASSISTANT)
        (clip,) = clips_of(messages)
        clips[item_id] = clip.copy()  # a view would keep the whole 12 s buffer
        chats[item_id] = audio_parts(messages, audio_key="")  # the text both sides must share
        return audio_parts(messages, audio_key=item_id)

    replay = Replay(AUDIO_ACCESS, **{"feedback": Feedback.PROSODY.value, **env_options})
    try:
        rows = replayed_rows(pairs, replay, prompt, paired)
    finally:
        replay.close()
    for pair in pairs:
        plus, minus = pair.item_id("resolved"), pair.item_id("unresolved")
        if chats[plus] != chats[minus] or np.array_equal(clips[plus], clips[minus]):
            raise RuntimeError(f"{pair.pair_id}: the sides must share the chat and differ in the audio")
    return rows, clips


def build_audio_assent(settings, eos_token_ids: set[int]):
    """(rows, clips, reward) for ``settings.item_limit`` training pairs drawn with its seed."""
    pairs = assent_pairs("train", limit=settings.item_limit, seed=settings.seed)
    reward = AssentReward(pairs, eos_token_ids, **settings.env_options)  # first: it checks feedback
    rows, clips = assent_rows(pairs, settings.paired, **settings.env_options)
    return rows, clips, reward
