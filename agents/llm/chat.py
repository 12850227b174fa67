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
    def from_client_spec(cls, spec: str, **options: Any):
        """A factory for this agent around the client ``spec`` names, with ``options`` (``dtype``,
        ``trust_remote_code``, ...; ``agents.llm.factory``) where the spec does not set them;
        raises ``ValueError`` (a bad spec) or ``ChatClientError`` (no such model here, code not
        trusted, no server) before any work."""
        from agents.llm.factory import ClientAgentFactory, check_spec, with_options

        spec = with_options(spec, **options)
        check_spec(spec)
        return ClientAgentFactory(cls, spec)


def hearing(client):
    """``client``, checked to take chats with audio parts (an audio agent's)."""
    if not getattr(client, "hears", False):
        raise TypeError(
            f"{type(client).__name__} cannot hear: an audio agent needs an audio-language model "
            "(--llm-client hf-audio:<model>, or openai:<url>@<model> serving one)"
        )
    return client
