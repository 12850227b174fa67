"""Build chat clients from a one-line spec, so the CLI (and worker processes) can create LLM
agents by name: ``hear-gym eval --cell llm@T+S --llm-client hf:./my-model``.

Specs:

* ``hf:<local folder or hub id>``: a transformers causal LM (``TransformersChatClient``); the
  folder may hold a LoRA adapter saved by ``hear-gym train sft`` / ``grpo`` (its base model
  must be on this machine too);
* ``hf-audio:<local folder or hub id>``: an audio-language model (``TransformersAudioChatClient``);
* either with ``?device=<auto|cpu|cuda|cuda:N>`` after the model (``agents.device``; default
  ``auto``: the first GPU when torch sees one, else the CPU), e.g. ``hf:./my-model?device=cuda:1``;
* ``openai:<base url>@<model>``: an OpenAI-compatible server, e.g.
  ``openai:http://localhost:8000/v1@Qwen/Qwen2.5-7B-Instruct`` (key from ``OPENAI_API_KEY``).

A factory holds only the spec (it pickles into worker processes); each process loads a model
once per spec.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

from agents.device import resolve_device
from agents.llm.clients import (
    OpenAIChatClient,
    TransformersAudioChatClient,
    TransformersChatClient,
    base_model_of,
)

SPEC_KINDS = ("hf", "hf-audio", "openai")
LOCAL_CLIENTS = {"hf": TransformersChatClient, "hf-audio": TransformersAudioChatClient}


def _parse(spec: str) -> tuple[str, str, str | None]:
    """(kind, model or base url, the device of a local model or the model name for openai)."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in SPEC_KINDS or not target:
        raise ValueError(
            f"client spec {spec!r} must be one of hf:<model>, hf-audio:<model>, openai:<base url>@<model>"
        )
    if kind != "openai":
        return kind, *_local_target(spec, target)
    base_url, at, model = target.rpartition("@")
    if not at or not base_url or not model:
        raise ValueError(f"client spec {spec!r}: write openai:<base url>@<model>")
    return kind, base_url, model


def _local_target(spec: str, target: str) -> tuple[str, str]:
    """(model, device) of ``<model>`` or ``<model>?device=<device>``."""
    model, query, option = target.partition("?")
    if not query:
        return model, "auto"
    key, equals, device = option.partition("=")
    if key != "device" or not equals or not model:
        raise ValueError(f"client spec {spec!r}: write {spec.partition(':')[0]}:<model>?device=<device>")
    return model, device


@cache
def client_from_spec(spec: str):
    kind, target, option = _parse(spec)
    if kind in LOCAL_CLIENTS:
        return LOCAL_CLIENTS[kind](target, device=option)
    return OpenAIChatClient(target, option, api_key=os.environ.get("OPENAI_API_KEY"))


def check_spec(spec: str) -> None:
    """What can go wrong with a spec, found before a run starts and without loading a model:
    its syntax or a device this machine lacks (``ValueError``), a model that is not on this
    machine, a server that does not answer (``ChatClientError``)."""
    kind, target, option = _parse(spec)
    if kind == "openai":
        OpenAIChatClient(target, option, api_key=os.environ.get("OPENAI_API_KEY")).check()
    else:
        resolve_device(option)
        base_model_of(target)  # the checkpoint, or a LoRA adapter's base model


@dataclass(frozen=True)
class ClientAgentFactory:
    """Calls ``agent_class(client)`` with the client the spec names."""

    agent_class: type
    spec: str

    def __call__(self):
        return self.agent_class(client_from_spec(self.spec))
