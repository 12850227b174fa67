"""A family's actions as named tools: what an agent that calls functions (TRL's
``environment_factory``, ``hear_gym.integrations.trl``) is offered in place of one free-text reply.

A family may declare a ``ToolSet`` (``EnvFamily.tools`` names it by import string). Each
``ActionTool`` is one kind of action: a name, a one-line description, typed parameters, and
``reply(base_env, **arguments)``, which writes the env's own text action for that call (Hear2Act:
``recommend(option=3)`` -> ``[ACTION: RECOMMEND] [OPTION: 3] ...``). Playing a tool call is then
exactly playing that text reply, so a tool agent and a text agent meet the same rules, rewards and
invalid-action outcomes.

A call whose arguments do not fit (a missing or unknown argument, a wrong type, or a value the
family refuses with ``InvalidCall``: Hear2Act's ``ask_about`` an attribute the domain lacks) is
played as ``invalid_reply``, a text action the family's parser refuses: the env charges its own
invalid-action outcome, as it would for a malformed text reply.

A family without a ``ToolSet`` gets ``generic_tools``: one tool, ``act(reply)``, that plays the
env's text action as written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym

PARAM_TYPES = (str, int)  # what a tool argument can be (JSON string or integer)


class InvalidCall(ValueError):
    """A tool call the env's text grammar cannot say (raised by ``ActionTool.reply``)."""


@dataclass(frozen=True)
class ToolParam:
    name: str
    kind: type  # one of PARAM_TYPES
    description: str
    required: bool = True
    default: str | int | None = None  # what an optional parameter left out stands for (None: nothing)

    def __post_init__(self) -> None:
        if self.kind not in PARAM_TYPES:
            raise TypeError(f"tool parameter {self.name!r}: kind must be one of {PARAM_TYPES}")
        if self.default is not None and (self.required or not self.accepts(self.default)):
            raise TypeError(f"tool parameter {self.name!r}: a default needs an optional {self.kind.__name__}")

    def accepts(self, value) -> bool:
        # bool is an int in Python but not a JSON integer
        return isinstance(value, self.kind) and not isinstance(value, bool)


@dataclass(frozen=True)
class ActionTool:
    name: str
    description: str  # one line the model reads: what the action does
    reply: Callable[..., str]  # (base env, **arguments) -> the env's text action; may raise InvalidCall
    params: tuple[ToolParam, ...] = ()

    def check(self, arguments: dict) -> str | None:
        """Why ``arguments`` do not fit this tool's parameters (None when they do)."""
        names = [p.name for p in self.params]
        missing = [p.name for p in self.params if p.required and p.name not in arguments]
        unknown = sorted(set(arguments) - set(names))
        if missing or unknown:
            return f"{self.name} takes arguments {names}; missing {missing}, unknown {unknown}"
        for param in self.params:
            if param.name in arguments and not param.accepts(arguments[param.name]):
                return (
                    f"{self.name}: argument {param.name!r} must be a {param.kind.__name__}, "
                    f"got {arguments[param.name]!r}"
                )
        return None

    def with_defaults(self, arguments: dict) -> dict:
        """``arguments`` (already ``check``ed) with the defaults of the optional ones left out;
        an optional parameter without a default stays out (``reply`` writes the call without it)."""
        defaults = {p.name: p.default for p in self.params if p.default is not None}
        return {**defaults, **arguments}


@dataclass(frozen=True)
class ToolSet:
    """``tools``: the named actions; ``invalid_reply``: a text action the env's parser refuses
    (played for a call whose arguments do not fit); ``instruction``: what the agent is told (the
    system message of a tool-calling chat); ``text_access``: the access condition whose
    observation is text (what a text-only tool agent reads); ``shown``: the observation's text
    entries the agent reads (None: every text entry); ``latest``: entries that describe the
    latest turn only (a per-turn state channel, replaced every step), shown in full with their
    key after every call, since an unchanged value is news too."""

    tools: tuple[ActionTool, ...]
    invalid_reply: str
    instruction: str
    text_access: str = "T"
    shown: tuple[str, ...] | None = None
    latest: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names) or not all(
            n.isidentifier() and not n.startswith("_") for n in names
        ):
            raise ValueError(f"tool names must be distinct public identifiers, got {names}")
        reserved = {"reset", "get_reward"} & set(names)
        if reserved:
            raise ValueError(f"tool names {sorted(reserved)} are reserved by TRL's environment protocol")


def _as_written(env: gym.Env, reply: str) -> str:
    return reply


def generic_tools(family_name: str, access_conditions: tuple[str, ...]) -> ToolSet:
    """The fallback for a family without a ``ToolSet``: ``act(reply)`` plays the text action as
    written, and the empty reply stands for a call that does not fit."""
    act = ActionTool(
        "act",
        f"Take your turn in the {family_name} environment: reply in its text action grammar.",
        _as_written,
        (ToolParam("reply", str, "your action, written in the environment's text action grammar"),),
    )
    access = "T" if "T" in access_conditions else access_conditions[0]
    return ToolSet(
        (act,),
        invalid_reply="",
        instruction=f"You act in the {family_name} environment. Call the act tool once per turn.",
        text_access=access,
    )
