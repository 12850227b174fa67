"""Ambiguity's SFT demonstrations: the gold option's letter for every turn of every episode, each
under the chat the text agent sends (``ambiguity_messages``). A dialogue contributes one
demonstration per turn, its earlier turns answered with their gold options (what the transcript
then shows)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.ambiguity.llm import ambiguity_messages
from agents.training_material import Demo, demo, seeded_sample
from hear_gym.core.registry import family
from hear_gym.envs.ambiguity.actions import LETTERS
from hear_gym.envs.ambiguity.family import ENV_ID
from hear_gym.envs.ambiguity.items.generator import episodes_by_id

DEMO_ACCESS = "T-nopunct"  # the words a listener's transcript gives, never punctuation's hints


def ambiguity_demos(
    split: str = "train",
    access: str = DEMO_ACCESS,
    limit: int | None = None,
    seed: int = 0,
    phenomena: Iterable[str] | None = None,
    **env_options: Any,
) -> list[Demo]:
    """The gold letters of ``split``'s episodes (``limit`` episodes drawn with ``seed``, kept in
    order, when given) under ``access``."""
    env_family = family(ENV_ID)
    by_id = episodes_by_id()
    ids = [
        e
        for e in env_family.item_ids(split)
        if phenomena is None or by_id[e].phenomenon.value in set(phenomena)
    ]
    chosen = seeded_sample(ids, limit, seed)
    env = env_family.make(access=access, actions="text", item_ids=chosen, **env_options)
    demos = []
    try:
        for episode_id in chosen:
            observation, _ = env.reset(options=env_family.reset_options(episode_id))
            episode = by_id[episode_id]
            for k, turn in enumerate(episode.turns):
                reply = LETTERS[turn.asked.answer]
                demos.append(
                    demo(
                        ambiguity_messages(observation),
                        reply,
                        env_id=ENV_ID,
                        item_id=episode_id,
                        turn=k,
                        phenomenon=episode.phenomenon.value,
                        language=episode.language,
                    )
                )
                observation, *_ = env.step(reply)
    finally:
        env.close()
    return demos
