"""Build chat clients from a one-line spec, so the CLI (and worker processes) can create LLM
agents by name: ``hear-gym eval --cell llm@T+S --llm-client hf:./my-model``.

Specs:

* ``hf:<local folder or hub id>``: a transformers causal LM (``TransformersChatClient``); the
  folder may hold a LoRA adapter saved by ``hear-gym train sft`` / ``grpo`` (its base model
  must be on this machine too);
* ``hf-audio:<local folder or hub id>``: an audio-language model (``TransformersAudioChatClient``);
* either with options after the model, ``?key=value&...``: ``device`` (``auto``, ``cpu``,
  ``cuda``, ``cuda:N``; ``agents.device``), ``dtype`` (``auto``, ``bf16``, ``fp16``, ``fp32``),
  ``max_new_tokens`` and ``trust_remote_code`` (``true``: run code the checkpoint ships), e.g.
  ``hf-audio:./Qwen2-Audio-7B-Instruct?device=cuda:1&dtype=bf16``;
* ``openai:<base url>@<model>``: an OpenAI-compatible server (``agents.llm.openai_client``), e.g.
  ``openai:http://localhost:8000/v1@Qwen/Qwen2-Audio-7B-Instruct`` (key from ``OPENAI_API_KEY``),
  with options ``max_tokens``, ``concurrency`` (requests in flight), ``timeout`` (seconds),
  ``retries`` and ``temperature``.

A factory holds only the spec (it pickles into worker processes). Each process loads a spec's
model once and keeps it until ``release_client`` (the runner calls ``ClientAgentFactory.release``
when a run is done with the agent; the trainers after each evaluation), so models evaluated one
after another never pile up in memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from agents.device import resolve_device
from agents.llm.loading import base_model_of, check_dtype, check_remote_code

SPEC_KINDS = ("hf", "hf-audio", "openai")
LOCAL_OPTIONS = {"device": str, "dtype": str, "max_new_tokens": int, "trust_remote_code": bool}
SERVER_OPTIONS = {
    "max_tokens": int,
    "concurrency": int,
    "timeout": float,
    "retries": int,
    "temperature": float,
}
SPEC_FORMS = "hf:<model>, hf-audio:<model>, openai:<base url>@<model>, each with ?key=value options"
_loaded: dict[str, Any] = {}  # spec -> its client, in this process, until released


def _parse(spec: str) -> tuple[str, str, str | None, dict[str, Any]]:
    """(kind, model or base url, the served model name for openai, options)."""
    kind, sep, target = spec.partition(":")
    if not sep or kind not in SPEC_KINDS or not target:
        raise ValueError(f"client spec {spec!r} must be one of {SPEC_FORMS}")
    if kind != "openai":
        model, _, query = target.partition("?")
        if not model:
            raise ValueError(f"client spec {spec!r}: write {kind}:<model>[?key=value&...]")
        return kind, model, None, _options(spec, query, LOCAL_OPTIONS)
    base_url, at, served = target.rpartition("@")
    served, _, query = served.partition("?")
    if not at or not base_url or not served:
        raise ValueError(f"client spec {spec!r}: write openai:<base url>@<model>[?key=value&...]")
    return kind, base_url, served, _options(spec, query, SERVER_OPTIONS)


def _options(spec: str, query: str, known: dict[str, type]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, text in parse_qsl(query, keep_blank_values=True) if query else ():
        if key not in known:
            raise ValueError(f"client spec {spec!r}: unknown option {key!r}; options: {', '.join(known)}")
        options[key] = _value(spec, key, text, known[key])
    if "dtype" in options:
        check_dtype(options["dtype"])
    return options


def _value(spec: str, key: str, text: str, kind: type) -> Any:
    if kind is bool:
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"client spec {spec!r}: {key} must be true or false, got {text!r}")
        return text.lower() in ("true", "1")
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"client spec {spec!r}: {key} must be a number, got {text!r}") from None


def with_options(spec: str, **options: Any) -> str:
    """``spec`` with more ``?key=value`` options: those it names already win, ``None`` values and
    options its kind does not take (a server's model has no local dtype) are left out."""
    kind, _, _, named = _parse(spec)
    known = SERVER_OPTIONS if kind == "openai" else LOCAL_OPTIONS
    pairs = [
        f"{k}={str(v).lower() if isinstance(v, bool) else v}"
        for k, v in options.items()
        if v is not None and k in known and k not in named
    ]
    if not pairs:
        return spec
    tail = spec.rpartition("@")[2] if kind == "openai" else spec
    return f"{spec}{'&' if '?' in tail else '?'}{'&'.join(pairs)}"


def _build(spec: str):
    kind, target, served, options = _parse(spec)
    if kind == "openai":
        from agents.llm.openai_client import OpenAIChatClient

        renamed = {"timeout_s" if k == "timeout" else k: v for k, v in options.items()}
        return OpenAIChatClient(target, served, api_key=os.environ.get("OPENAI_API_KEY"), **renamed)
    from agents.extras import import_extra

    import_extra("transformers", "agents", f"the {kind}: client")
    from agents.llm.clients import TransformersAudioChatClient, TransformersChatClient

    client_class = TransformersAudioChatClient if kind == "hf-audio" else TransformersChatClient
    return client_class(target, **options)


def client_from_spec(spec: str):
    """The client ``spec`` names, loaded once per process and kept until ``release_client``."""
    if spec not in _loaded:
        _loaded[spec] = _build(spec)
    return _loaded[spec]


def release_client(spec: str) -> None:
    """Forget the spec's client and free its model's memory (a later call loads it again)."""
    client = _loaded.pop(spec, None)
    if client is not None and hasattr(client, "release"):
        client.release()


def check_spec(spec: str) -> None:
    """What can go wrong with a spec, found before a run starts and without loading a model:
    its syntax or a device this machine lacks (``ValueError``), a model that is not on this
    machine or ships code not trusted, a server that does not answer (``ChatClientError``)."""
    kind, target, served, options = _parse(spec)
    if kind == "openai":
        from agents.llm.openai_client import OpenAIChatClient

        OpenAIChatClient(target, served, api_key=os.environ.get("OPENAI_API_KEY")).check()
    else:
        resolve_device(options.get("device", "auto"))
        base_model_of(target)  # the checkpoint, or a LoRA adapter's base model
        check_remote_code(target, options.get("trust_remote_code", False))


@dataclass(frozen=True)
class ClientAgentFactory:
    """Calls ``agent_class(client)`` with the client the spec names; ``release()`` frees it."""

    agent_class: type
    spec: str

    def __call__(self):
        return self.agent_class(client_from_spec(self.spec))

    def release(self) -> None:
        release_client(self.spec)
