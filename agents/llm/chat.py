"""The base every chat-model agent shares: stateless, text replies, built around a chat client.

``ChatAgent.from_client_spec(spec)`` is how the CLI builds one from ``--llm-client`` without
knowing about clients: it checks the spec (syntax, model on this machine, server reachable)
before any run starts and returns a picklable factory that worker processes call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ChatAgent:
    """Stateless: the observation is the whole context. Constructed with a chat client."""

    action_format = "text"
    needs_client = True

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> str:
        return self.act_batch([observation])[0]

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        raise NotImplementedError

    @classmethod
    def from_client_spec(cls, spec: str):
        """A factory for this agent around the client ``spec`` names; raises ``ValueError`` (a
        bad spec) or ``ChatClientError`` (no such model here, no server) before any work."""
        from agents.llm.factory import ClientAgentFactory, check_spec

        check_spec(spec)
        return ClientAgentFactory(cls, spec)
