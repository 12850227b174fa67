"""Hear2Act's SFT demonstrations: every decision of the state-aware agent playing whole dialogues
under a state channel (``T+S``: the ground-truth concern tag; ``T+S^`` with a state inferrer),
each prompt the chat the text agent sends (``agents.hear2act.prompts.messages``), each reply as
the env writes it in the P6a grammar."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.hear2act.baselines import StateAwareAgent
from agents.hear2act.prompts import messages
from agents.training_material import Demo, demo
from hear_gym.core.registry import family
from hear_gym.envs.hear2act.family import ENV_ID

DEMO_ACCESS = "T+S"


def hear2act_demos(
    split: str = "train",
    access: str = DEMO_ACCESS,
    limit: int | None = None,
    seed: int = 0,
    **env_options: Any,
) -> list[Demo]:
    """The state-aware agent's decisions over the first ``limit`` dialogues of ``split``; the
    dialogue of scenario ``k`` is played with seed ``seed + k``."""
    ids = family(ENV_ID).item_ids(split)[:limit]
    env = gym.make(ENV_ID, access=access, split=split, disable_env_checker=True, **env_options)
    expert = StateAwareAgent()
    demos = []
    try:
        for k, scenario_id in enumerate(ids):
            demos.extend(_play(env, expert, scenario_id, seed + k, access))
    finally:
        env.close()
    return demos


def _play(env: gym.Env, expert, scenario_id: str, seed: int, access: str) -> list[Demo]:
    observation, _ = env.reset(seed=seed, options=family(ENV_ID).reset_options(scenario_id))
    expert.reset(seed=seed)
    demos, done, turn = [], False, 0
    while not done:
        prompt = messages(observation, "text")
        observation, _, terminated, truncated, info = env.step(expert.act(observation))
        done = terminated or truncated
        turn += 1
        demos.append(
            demo(
                prompt,
                info["turn_record"]["assistant_text"],
                env_id=ENV_ID,
                item_id=scenario_id,
                access=access,
                turn=turn,
            )
        )
    return demos
