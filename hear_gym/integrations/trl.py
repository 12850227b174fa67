"""Every registered env as a TRL ``environment_factory``: ``GRPOTrainer(...,
environment_factory=environment_factory(env_id))``.

TRL (>= 0.29; hear_gym pins 1.16) makes one instance of the factory's class per rollout, calls
``reset(**row)`` with the dataset row and appends the text it returns to the prompt's last user
message, offers the class's public methods (with their docstrings) to the model as tools, runs the
calls the model makes until it answers without one (or ``max_tool_calling_iterations`` or
``max_completion_length`` stops it), and scores the rollout with ``get_reward()``.

* **Tools** come from the family contract: the family's ``ToolSet`` (``EnvFamily.tools``;
  ``hear_gym.core.tools``), one method per action (Hear2Act: ``ask``, ``ask_about(attribute)``,
  ``clarify``, ``recommend(option)``, ``confirm``; VoiceGate: ``mute``, one per inventory tool,
  ``answer(text)``; Onset: ``wait``, ``act(action)``), or for a family without one the generic
  ``act(reply)``, which plays the env's text action as written. A call plays the env's own text
  action for it, so its reward and its invalid-action outcome are the env's. A call whose
  arguments do not fit is played as the family's ``invalid_reply`` (the env's invalid outcome)
  and its result starts with ``Invalid call:`` and the reason. A call after the episode ended is
  not played.
* **reset(**row)** reads ``item_id`` (None: the env draws one), ``seed`` (default 0),
  ``access`` (default: the class's) and ``reset_options`` (more of the env's reset options, e.g.
  the Hear2Act twin user ``{"hidden_user": {...}}``) and ignores every other column (``prompt``,
  the pair's twin item ``item_id_minus``, ...); a row of the previous release's form names its
  item ``episode_id``, still read, with a DeprecationWarning, for one release. The same row gives the same start state, so the G members of a GRPO
  group start from one state (paired-group GRPO's second half gets the twin's row from
  ``PairedGRPOTrainer``). It returns the observation's text entries.
* **Tool results** are what changed in the observation's text entries (an entry that grew, like
  a transcript, shows only what was added), then ``(The episode is over.)`` on the last step. An
  entry the tool set lists as ``latest`` (a per-turn state channel, e.g. Hear2Act's T+S
  ``concern_state``) is shown after every call as ``[key] value``, changed or not.
* **get_reward()** is the env return: the sum of the step rewards of the finished episode. An
  episode the model leaves unfinished (it stopped calling tools, or a cap stopped it) is first
  played out as the env plays a text agent whose every remaining reply is malformed (the
  family's ``invalid_reply`` until the episode ends), so stopping early never dodges a cost the
  env would charge.
* **Text only.** TRL 1.16 passes images in tool results (content parts of type ``image``) and
  nothing else: an audio part is neither collected nor given to the processor. So the factory
  plays the family's text access condition (``ToolSet.text_access``, T for the registered
  families) and shows text entries only; under an audio condition the audio is dropped.

``environment_factories()`` maps every family's name to its class, for TRL's routing by a
dataset's ``environment`` column; ``episode_rows`` builds such rows.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import numpy as np

from hear_gym.core.registry import env_ids, family
from hear_gym.core.tools import ActionTool, InvalidCall, ToolParam, ToolSet, generic_tools

EPISODE_OVER = "(The episode is over.)"
NOT_PLAYED = "The episode is over; this call was not played."
MAX_PLAYOUT_STEPS = 1_000  # a family whose invalid replies never end an episode is a bug


def tool_set(env_id: str) -> ToolSet:
    """The family's declared ``ToolSet``, or the generic ``act(reply)`` one."""
    env_family = family(env_id)
    if env_family.tools is None:
        return generic_tools(env_family.name, env_family.access_conditions)
    module, _, attr = env_family.tools.partition(":")
    found = getattr(import_module(module), attr)
    if not isinstance(found, ToolSet):
        raise TypeError(f"{env_family.tools} (the tools of {env_id}) is not a ToolSet")
    return found


class HearGymEnvironment:
    """One rollout's env, in TRL's environment protocol. Subclasses made by
    ``environment_factory`` add one public method per tool; everything else here is private,
    because TRL offers every public method except ``reset`` and ``get_reward`` as a tool."""

    _env_id: str
    _tools: ToolSet
    _access: str
    _env_options: dict[str, Any]

    def __init__(self) -> None:
        self._family = family(self._env_id)
        self._env = None
        self._env_key: tuple | None = None
        self._texts: dict[str, str] = {}
        self.item_id: str | None = None
        self.episode_return = 0.0
        self.done = False
        self.started = False
        self.replies: list[str] = []  # the text actions played, in order
        self.invalid_calls = 0
        self.played_out = 0  # malformed replies get_reward played to end an unfinished episode
        self.episode: dict[str, Any] | None = None  # the env's record of the finished episode

    def reset(
        self,
        item_id: str | None = None,
        seed: int = 0,
        access: str | None = None,
        reset_options: dict[str, Any] | None = None,
        **row,
    ) -> str:
        """Start the episode of the item the row names (``item_id``, ``seed``, ``access``, and
        ``reset_options`` beside the item's, e.g. Hear2Act's ``hidden_user`` twin); returns its
        first observation's text."""
        if item_id is None and row.get("episode_id") is not None:
            warnings.warn(
                "a row naming its item 'episode_id' is deprecated; name it 'item_id'",
                DeprecationWarning,
                stacklevel=2,
            )
            item_id = row["episode_id"]
        access = self._family.check_access(access or self._access)
        key = (access, item_id)
        if key != self._env_key:
            if self._env is not None:
                self._env.close()
            episode = {} if item_id is None else self._family.episode_kwargs([item_id])
            self._env = self._family.make(access=access, actions="text", **episode, **self._env_options)
            self._env_key = key
        options = {} if item_id is None else self._family.reset_options(item_id)
        observation, _ = self._env.reset(seed=int(seed), options={**options, **(reset_options or {})} or None)
        self.item_id, self.episode_return, self.done, self.started = item_id, 0.0, False, True
        self.replies, self.invalid_calls, self.played_out, self.episode = [], 0, 0, None
        self._texts = self._text_entries(observation)
        return "\n".join(f"[{key}]\n{text}" for key, text in self._texts.items())

    def get_reward(self) -> float:
        """The env return of the episode (played out with malformed replies if unfinished)."""
        if not self.started:
            raise RuntimeError("get_reward before reset")
        for _ in range(MAX_PLAYOUT_STEPS):
            if self.done:
                return float(self.episode_return)
            self._step(self._tools.invalid_reply)
            self.played_out += 1
        raise RuntimeError(f"{self._env_id}: {MAX_PLAYOUT_STEPS} malformed replies did not end the episode")

    # -- playing a call ----------------------------------------------------------------------
    def _call(self, tool: ActionTool, arguments: dict[str, Any]) -> str:
        if not self.started:
            raise RuntimeError("a tool call before reset")
        if self.done:
            return NOT_PLAYED
        arguments = {k: v for k, v in arguments.items() if v is not None}
        reason = tool.check(arguments)
        if reason is None:
            try:
                reply = tool.reply(self._env.unwrapped, **tool.with_defaults(arguments))
            except InvalidCall as refused:  # a value the family cannot say
                reason = str(refused)
        if reason is not None:
            self.invalid_calls += 1
            return f"Invalid call: {reason}.\n{self._step(self._tools.invalid_reply)}".rstrip()
        return self._step(reply)

    def _step(self, reply: str) -> str:
        observation, reward, terminated, truncated, info = self._env.step(reply)
        self.replies.append(reply)
        self.episode_return += float(reward)
        self.done = bool(terminated or truncated)
        if self.done:
            self.episode = info.get("episode")
        texts = self._text_entries(observation)
        shown = [
            f"[{key}] {text}" if key in self._tools.latest else changed(self._texts.get(key, ""), text)
            for key, text in texts.items()
        ]
        self._texts = texts
        return "\n".join([*(s for s in shown if s), *([EPISODE_OVER] if self.done else [])])

    def _text_entries(self, observation: dict[str, Any]) -> dict[str, str]:
        wanted = self._tools.shown
        return {
            key: value
            for key, value in observation.items()
            if isinstance(value, str) and (wanted is None or key in wanted or key in self._tools.latest)
        }


def changed(before: str, after: str) -> str:
    """What the agent is shown of a text entry: nothing if unchanged, the added part if it grew."""
    if after == before:
        return ""
    if before and after.startswith(before):
        return after[len(before) :].strip("\n")
    return after


def _optional(param: ToolParam) -> str:
    if param.required:
        return ""
    return " (optional)" if param.default is None else f" (optional, default {param.default!r})"


def _tool_method(tool: ActionTool):
    """A method TRL can offer as ``tool``: its signature and Google-style docstring describe the
    parameters (TRL renders them as the tool's JSON schema); it accepts any keyword arguments, so
    a call that does not fit reaches ``_call`` and gets the env's invalid outcome instead of a
    Python error."""

    def method(self, **arguments):
        return self._call(tool, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    for param in tool.params:
        kind = param.kind if param.required else param.kind | None
        default = inspect.Parameter.empty if param.required else None
        parameters.append(
            inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        )
        annotations[param.name] = kind
    method.__name__ = method.__qualname__ = tool.name
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)
    method.__annotations__ = annotations
    args = "".join(f"\n    {p.name}: {p.description}{_optional(p)}" for p in tool.params)
    method.__doc__ = (
        f"{tool.description}\n"
        + (f"\nArgs:{args}\n" if tool.params else "")
        + "\nReturns:\n    What the environment shows next.\n"
    )
    return method


def offered_tools(environment: HearGymEnvironment) -> list:
    """The methods TRL offers as tools for one factory instance, in its order (the class's public
    functions by name, less ``reset`` and ``get_reward``): what a chat is rendered with."""
    return [
        getattr(environment, name)
        for name, _ in inspect.getmembers(type(environment), predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]


def _class_name(family_name: str) -> str:
    return "".join(part.capitalize() for part in family_name.split("_")) + "Environment"


def environment_factory(
    env_id: str, access: str | None = None, **env_options: Any
) -> type[HearGymEnvironment]:
    """The ``environment_factory`` class of ``env_id``: its family's tools as methods,
    ``reset(**row)`` and ``get_reward()``. ``access``: the default access condition (the tool
    set's text access when None); ``env_options``: the family's ``make`` kwargs (Hear2Act:
    ``feedback``, ``reward``, ``turn_cost``, ...; ``access`` and ``actions`` are set here)."""
    env_family = family(env_id)
    if "text" not in env_family.action_formats:
        raise ValueError(f"{env_id} has no text actions, which its tools are played as")
    tools = tool_set(env_id)
    fixed = sorted({"access", "actions"} & set(env_options))
    if fixed:
        raise ValueError(f"env_options must not set {fixed}: the factory plays text actions")
    namespace: dict[str, Any] = {tool.name: _tool_method(tool) for tool in tools.tools}
    namespace.update(
        _env_id=env_id,
        _tools=tools,
        _access=env_family.check_access(access or tools.text_access),
        _env_options=dict(env_options),
        __doc__=f"{env_id} for TRL's environment_factory. {tools.instruction}",
        __module__=__name__,
    )
    return type(_class_name(env_family.name), (HearGymEnvironment,), namespace)


def environment_factories(ids: Sequence[str] | None = None) -> dict[str, type[HearGymEnvironment]]:
    """``{family name: factory class}`` for ``ids`` (every registered env when None): TRL routes
    each row to the env its ``environment`` column names."""
    return {family(env_id).name: environment_factory(env_id) for env_id in (ids or env_ids())}


def episode_rows(
    env_id: str,
    item_ids: Sequence[str] | None = None,
    split: str = "train",
    n: int | None = None,
    seed: int = 0,
    routed: bool = False,
    episode_ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Dataset rows for ``env_id``'s factory: the tool set's instruction as the system message and
    an empty user message (``reset`` appends the observation), ``item_id`` and ``seed``.
    ``item_ids`` (default: ``n`` of ``split``'s, drawn with ``seed`` and kept in order; all
    when ``n`` is None); ``routed``: add the ``environment`` column for a dict of factories.
    ``episode_ids`` is the deprecated name of ``item_ids``, read for one release."""
    if episode_ids is not None:
        warnings.warn(
            "episode_rows(episode_ids=...) is deprecated; use item_ids=", DeprecationWarning, stacklevel=2
        )
        item_ids = episode_ids if item_ids is None else item_ids
    if item_ids is None:
        available = family(env_id).item_ids(split)
        keep = (
            range(len(available))
            if n is None
            else sorted(np.random.default_rng(seed).permutation(len(available))[:n])
        )
        item_ids = [available[i] for i in keep]
    prompt = [
        {"role": "system", "content": tool_set(env_id).instruction},
        {"role": "user", "content": ""},
    ]
    route = {"environment": family(env_id).name} if routed else {}
    return [{"prompt": prompt, "item_id": e, "seed": seed, **route} for e in item_ids]
