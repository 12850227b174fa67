"""Hear2Act's tool-calling demonstrations: whole dialogues of the state-aware agent under a state
channel (T+S by default), written as the chat TRL's ``environment_factory`` builds
(``hear_gym.integrations.trl``): the tool set's instruction, the reset observation as the user's
message, then each decision as an assistant tool call followed by the tool's result, and a closing
assistant message without a call once the episode is over (TRL's tool loop ends there).

The expert reads the gym observation, so each dialogue is played twice in lockstep: on the text
env the expert sees, and through the factory class, whose tool results are the chat's. Both start
from the same scenario and seed and take the same action, so they are the same episode (their
returns are checked equal)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.hear2act.baselines import StateAwareAgent
from hear_gym.core.registry import family
from hear_gym.envs.hear2act.actions import ASK_GENERAL, ASK_SLOT0, CLARIFY, CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.family import ENV_ID
from hear_gym.integrations.trl import environment_factory, episode_rows

TOOL_DEMO_ACCESS = "T+S"
CLOSING = "Done."  # what the assistant says after the last call: an answer without a call ends TRL's loop


def tool_call(action: int, env: gym.Env) -> tuple[str, dict[str, Any]]:
    """The tool call (name, arguments) that plays the Discrete ``action``."""
    if action == ASK_GENERAL:
        return "ask", {}
    if ASK_SLOT0 <= action < CLARIFY:
        return "ask_about", {"attribute": env.unwrapped.domain.concern_dimensions[action - ASK_SLOT0].label}
    if action == CLARIFY:
        return "clarify", {}
    if action == CONFIRM:
        return "confirm", {}
    return "recommend", {"option": int(action - RECOMMEND0 + 1)}


def hear2act_tool_demos(
    split: str = "train",
    access: str = TOOL_DEMO_ACCESS,
    limit: int | None = None,
    seed: int = 0,
    **env_options: Any,
) -> list[dict[str, Any]]:
    """The state-aware agent's dialogues over the first ``limit`` scenarios of ``split``, all
    played with ``seed`` (as the factory's rows are); each a ``{"messages": [...],
    "item_id": ..., "return": ...}`` chat in TRL's tool-calling message format."""
    ids = list(family(ENV_ID).item_ids(split)[:limit])
    factory = environment_factory(ENV_ID, access=access, **env_options)
    env = gym.make(ENV_ID, access=access, split=split, disable_env_checker=True, **env_options)
    try:
        return [_dialogue(env, factory(), row) for row in episode_rows(ENV_ID, ids, seed=seed)]
    finally:
        env.close()


def _dialogue(env: gym.Env, tools, row: dict[str, Any]) -> dict[str, Any]:
    observation, _ = env.reset(seed=row["seed"], options=family(ENV_ID).reset_options(row["item_id"]))
    expert = StateAwareAgent()
    expert.reset(seed=row["seed"])
    system, user = row["prompt"]
    messages = [system, {**user, "content": user["content"] + tools.reset(**row)}]
    done, episode_return = False, 0.0
    while not done:
        action = expert.act(observation)
        name, arguments = tool_call(action, env)
        call = {"type": "function", "function": {"name": name, "arguments": arguments}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "name": name, "content": getattr(tools, name)(**arguments)})
        observation, reward, terminated, truncated, _ = env.step(action)
        episode_return += float(reward)
        done = terminated or truncated
    if tools.get_reward() != episode_return:
        raise RuntimeError(f"{row['item_id']}: the factory and the env played different episodes")
    messages.append({"role": "assistant", "content": CLOSING})
    return {"messages": messages, "item_id": row["item_id"], "return": episode_return}
