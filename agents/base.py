"""The one agent interface every policy and the evaluation runner share."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """``reset`` at the start of each episode, then ``act`` on each observation.

    The runner builds a new agent from its cell's factory for every episode (one per lockstep
    batch), then ``configure``, ``reset(seed)`` and ``act`` to the end, and plays the episodes in
    an order shuffled by the run seed; heavy parts that are only read (weights, a chat client, a
    fitted probe) are built once and shared by the factory (docs/evaluation.md, an agent's
    lifecycle).

    ``required_access`` names the access condition(s) whose observation keys the agent reads
    (e.g. ``"T+S"`` for the concern-state tag, or a tuple of alternatives); the runner checks it.
    An optional ``action_format = "text"`` makes the runner build the env with P6a text actions,
    and ``observation_format = "features"`` with the SB3-ready numeric observation (policies
    trained with ``hear-gym train ppo``). An optional ``configure(env_options)`` is called
    by the runner on each agent it builds with the cell's env kwargs (the run's plus the cell's
    options, JSON values; ``hear_gym.eval.runner``), for settings the observation does not carry
    (a turn cost, the reward); an agent without it is built as before.
    """

    required_access: str | tuple[str, ...]

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: dict[str, Any]) -> Any: ...
