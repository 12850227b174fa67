"""Hear2Act's multi-turn GRPO tasks (``agents.training_material.DialogueTask``): whole dialogues
under transcript access (T) with P6a text actions, each turn's chat from ``dialogue_messages``,
evaluated by ``llm_dialogue@T`` (``hear2act_dialogue``); and the same dialogues under the ground-truth
state channel T+S (``hear2act_dialogue_state``), for the tools interface only: there the factory
shows the state tag after every call (``hear_gym.envs.hear2act.tools``), while the text
interface's append-only chat has no place for a tag replaced every turn (``dialogue_messages``
refuses a T+S observation at the first rollout).

The cut reward rule (``CUT_RULE``): a dialogue cut by the token cap ends with no final option, so
it gets no final reward (the env's no-success outcome: 0 under both ``success`` and ``tiered``)
and keeps what it has paid: the summed step rewards so far (turn costs, invalid penalties); an
unfinished reply is charged like an invalid one (``invalid_action_penalty`` and ``turn_cost``), so
running into the cap never costs less than a malformed reply.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import gymnasium as gym

from agents.hear2act.dialogue_llm import DialogueLLMAgent
from agents.hear2act.dialogue_prompts import dialogue_messages
from agents.training_material import DialogueTask
from hear_gym.envs.hear2act.env import REWARDS
from hear_gym.envs.hear2act.family import FAMILY, make

ACCESS = "T"  # the chat layout is append-only under the transcript condition only
STATE_ACCESS = "T+S"
CUT_RULE = (
    "a dialogue cut by max_completion_length gets no final reward (no final option: the env's "
    "no-success outcome) plus the step rewards it has paid (turn costs, invalid penalties); a reply "
    "cut before its stop token is charged invalid_action_penalty - turn_cost"
)
SET_BY_THE_ROLLOUT = ("access", "actions", "observation", "split", "item_ids", "assistant")
DEFAULT_OPTIONS = {"feedback": "explicit", "reward": "success", "turn_cost": 0.0}


def make_dialogue_env(scenario_id: str, env_options: dict[str, Any], access: str = ACCESS) -> gym.Env:
    """Hear2Act under ``access`` (transcript by default) with P6a text actions, holding one scenario."""
    return make(access=access, actions="text", item_ids=[scenario_id], **env_options)


def cut_return(env: gym.Env, unfinished_reply: bool) -> float:
    """The return of a dialogue the cap cut (``CUT_RULE``)."""
    base = env.unwrapped
    charge = base.invalid_action_penalty - base.turn_cost if unfinished_reply else 0.0
    return float(base.episode_return + charge)


def check_options(env_options: dict[str, Any]) -> None:
    fixed = [k for k in SET_BY_THE_ROLLOUT if k in env_options]
    if fixed:
        raise ValueError(f"env_options must not set {fixed}: dialogues are played under T with text actions")
    if "feedback" not in env_options:
        raise ValueError("env_options must name the feedback realization ('explicit' or 'prosody')")
    if env_options.get("reward", "success") not in REWARDS:
        raise ValueError(f"env_options['reward'] must be one of {sorted(REWARDS)}")


DIALOGUE = DialogueTask(
    make_env=make_dialogue_env,
    reset_options=FAMILY.reset_options,
    messages=dialogue_messages,
    cut_return=cut_return,
    cut_rule=CUT_RULE,
    check_options=check_options,
    default_options=DEFAULT_OPTIONS,
    access=ACCESS,
    player="llm_dialogue",
    agent=DialogueLLMAgent,
)
DIALOGUE_STATE = replace(
    DIALOGUE, make_env=partial(make_dialogue_env, access=STATE_ACCESS), access=STATE_ACCESS
)
