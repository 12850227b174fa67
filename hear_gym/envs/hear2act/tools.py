"""Hear2Act's actions as named tools (``hear_gym.core.tools``): ``ask``, ``ask_about(attribute)``,
``clarify``, ``recommend(option)`` and ``confirm``. Each call writes the P6a text action with the
utterance the env itself writes for the Discrete action (``Hear2ActEnv._assistant_text``), so a
call and its Discrete index play the same turn. ``ask_about`` takes an attribute of the domain
(its label as the ``attributes`` entry lists it, or its key, in any case); any other attribute is
an ``InvalidCall``, as a Discrete slot the domain lacks is an invalid action. An option outside
1..11 reaches the P6a parser, which refuses it. ``clarify`` exists for text assistants only (the
parser refuses it for a spoken one)."""

from __future__ import annotations

from hear_gym.core.tools import ActionTool, InvalidCall, ToolParam, ToolSet
from hear_gym.envs.hear2act.env import Hear2ActEnv
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction

INSTRUCTION = (
    "You are a task-oriented service assistant. Help the user reach the single option that best "
    "fits their needs, based only on the conversation. Take exactly one action per turn by calling "
    "one tool: recommend an option, ask a question (general or about one attribute), clarify "
    "whether the current option works, or confirm the current option once the user has clearly "
    "accepted it and no concern is unresolved."
)


def _said(env: Hear2ActEnv, action: AssistantAction) -> str:
    return env._assistant_text(action)


def _attribute_key(env: Hear2ActEnv, attribute: str) -> str:
    wanted = attribute.strip().lower()
    for dimension in env.domain.concern_dimensions:
        if wanted in (dimension.key.lower(), dimension.label.lower()):
            return dimension.key
    labels = [d.label for d in env.domain.concern_dimensions]
    raise InvalidCall(f"attribute {attribute!r} is not one of this domain's attributes {labels}")


def _recommend(env: Hear2ActEnv, option: int) -> str:
    if not 1 <= option <= len(env.scenario.candidates):  # the parser refuses it; no utterance to write
        return f"[ACTION: RECOMMEND] [OPTION: {option}]"
    return _said(env, AssistantAction(ActionKind.RECOMMEND, option=option))


TOOLS = ToolSet(
    tools=(
        ActionTool(
            "ask",
            "Ask the user a general question: is anything about the current option not right for them?",
            lambda env: _said(env, AssistantAction(ActionKind.ASK)),
        ),
        ActionTool(
            "ask_about",
            "Ask the user how important one attribute of the domain is to them.",
            lambda env, attribute: _said(
                env, AssistantAction(ActionKind.ASK, attribute=_attribute_key(env, attribute))
            ),
            (ToolParam("attribute", str, "one of the attributes the [attributes] list names"),),
        ),
        ActionTool(
            "clarify",
            "Ask the user whether the current option fully works for them.",
            lambda env: "[ACTION: CLARIFY] Does this option fully work for you?",
        ),
        ActionTool(
            "recommend",
            "Recommend one option from the [options] list.",
            _recommend,
            (ToolParam("option", int, "the option's number, 1 to 11"),),
        ),
        ActionTool(
            "confirm",
            "Confirm the current option: ends the dialogue if the user has accepted it.",
            lambda env: _said(env, AssistantAction(ActionKind.CONFIRM)),
        ),
    ),
    invalid_reply="[ACTION: NONE]",  # no action tag: the parser's invalid action
    instruction=INSTRUCTION,
    text_access="T",
    shown=("domain", "attributes", "options", "transcript"),
    # the state channels of T+S, T+S^ and T+SER describe the latest user turn only
    latest=("concern_state", "inferred_state", "affect"),
)
