"""Build chat clients from a one-line spec, so the CLI (and worker processes) can create LLM
agents by name: ``hear-gym eval --cell llm@T+S --llm-client hf:./my-model``.

Specs:

* ``hf:<local folder or hub id>``: a transformers causal LM (``TransformersChatClient``); the
  folder may hold a LoRA adapter saved by ``hear-gym train sft`` / ``grpo`` (its base model
  must be on this machine too);
* ``hf-audio:<local folder or hub id>``: an audio-language model (``TransformersAudioChatClient``);
* ``openai:<base url>@<model>``: an OpenAI-compatible server, e.g.
  ``openai:http://localhost:8000/v1@Qwen/Qwen2.5-7B-Instruct`` (key from ``OPENAI_API_KEY``).

A factory holds only the spec (it pickles into worker processes); each process loads a model
once per spec.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

from agents.llm.clients import (
    OpenAIChatClient,
    TransformersAudioChatClient,
    TransformersChatClient,
    base_model_of,
)

SPEC_KINDS = ("hf", "hf-audio", "openai")


def _parse(spec: str) -> tuple[str, str, str | None]:
    """(kind, model or base url, model name for openai)."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in SPEC_KINDS or not target:
        raise ValueError(
            f"client spec {spec!r} must be one of hf:<model>, hf-audio:<model>, openai:<base url>@<model>"
        )
    if kind != "openai":
        return kind, target, None
    base_url, at, model = target.rpartition("@")
    if not at or not base_url or not model:
        raise ValueError(f"client spec {spec!r}: write openai:<base url>@<model>")
    return kind, base_url, model


@cache
def client_from_spec(spec: str):
    kind, target, model = _parse(spec)
    if kind == "hf":
        return TransformersChatClient(target)
    if kind == "hf-audio":
        return TransformersAudioChatClient(target)
    return OpenAIChatClient(target, model, api_key=os.environ.get("OPENAI_API_KEY"))


def check_spec(spec: str) -> None:
    """What can go wrong with a spec, found before a run starts and without loading a model:
    its syntax (``ValueError``), a model that is not on this machine, a server that does not
    answer (``ChatClientError``)."""
    kind, target, model = _parse(spec)
    if kind == "openai":
        OpenAIChatClient(target, model, api_key=os.environ.get("OPENAI_API_KEY")).check()
    else:
        base_model_of(target)  # the checkpoint, or a LoRA adapter's base model


@dataclass(frozen=True)
class ClientAgentFactory:
    """Calls ``agent_class(client)`` with the client the spec names."""

    agent_class: type
    spec: str

    def __call__(self):
        return self.agent_class(client_from_spec(self.spec))
