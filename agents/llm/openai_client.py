"""``OpenAIChatClient``: any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp's
server, a hosted API) through the ``openai`` package (``pip install 'hear-gym[agents]'``).

* Audio: a chat's audio parts (``agents.llm.parts``) go as the API's ``input_audio`` parts, each
  clip a base64 16 kHz mono 16-bit WAV; text parts and string contents go as they are. The
  server's model must hear (vLLM serves Qwen2-Audio and Qwen2.5-Omni's thinker this way).
* Concurrency: ``complete`` keeps up to ``concurrency`` requests in flight (threads around one
  client; the package's client is thread-safe) and returns the replies in the order asked.
* Timeouts and retries: each request waits at most ``timeout_s``; a timeout, a refused
  connection, a 408/409/429 or a 5xx is retried up to ``retries`` times with the package's
  exponential backoff (0.5 s doubling, honouring ``Retry-After``); other errors fail at once. A
  request that still fails raises ``ChatClientError`` with the server's reason in one line.
* Greedy by default (``temperature=0``), at most ``max_tokens`` tokens a reply.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from agents.extras import import_extra
from agents.llm.loading import ChatClientError
from agents.llm.parts import AUDIO, SAMPLING_RATE, is_audio_part, own_keys

Messages = list[dict[str, Any]]


def wav_base64(clip: np.ndarray, sampling_rate: int = SAMPLING_RATE) -> str:
    """``clip`` as base64 of a 16-bit PCM WAV file."""
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(clip, dtype=np.float32), sampling_rate, format="WAV", subtype="PCM_16")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def request_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat in the API's schema: audio parts as ``input_audio`` (base64 WAV), other parts with
    their own keys only."""

    def part(p: dict[str, Any]) -> dict[str, Any]:
        if is_audio_part(p):
            return {"type": "input_audio", "input_audio": {"data": wav_base64(p[AUDIO]), "format": "wav"}}
        return own_keys(p)

    return [
        {**m, "content": m["content"] if isinstance(m["content"], str) else [part(p) for p in m["content"]]}
        for m in messages
    ]


class OpenAIChatClient:
    hears = True  # whether the served model hears is the server's to say

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        timeout_s: float = 120.0,
        concurrency: int = 8,
        retries: int = 3,
    ) -> None:
        if concurrency < 1 or retries < 0 or timeout_s <= 0 or max_tokens < 1:
            raise ValueError("concurrency and max_tokens must be >= 1, retries >= 0 and timeout_s > 0")
        openai = import_extra("openai", "agents", "an OpenAI-compatible chat client")
        self.base_url, self.model = base_url.rstrip("/"), model
        self.temperature, self.max_tokens, self.concurrency = temperature, max_tokens, concurrency
        # a local server needs no key; the package refuses to start without one
        self.client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key or "EMPTY", timeout=timeout_s, max_retries=retries
        )
        self._errors = openai.APIError

    def _one(self, messages: Messages) -> str:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=request_messages(messages),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
        except self._errors as exc:
            reason = " ".join(str(exc).split())[:300]
            raise ChatClientError(
                f"chat server {self.base_url} failed: {type(exc).__name__}: {reason}"
            ) from None
        try:
            return response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError) as exc:
            raise ChatClientError(f"unexpected reply from {self.base_url}: {str(response)[:200]}") from exc

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        if len(batch) <= 1 or self.concurrency == 1:
            return [self._one(m) for m in batch]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(batch))) as pool:
            return list(pool.map(self._one, batch))

    def check(self) -> None:
        """Fail fast (``ChatClientError``) when the server cannot be reached: one try of
        ``/models``, a short wait."""
        try:
            self.client.with_options(max_retries=0, timeout=5.0).models.list()
        except self._errors as exc:
            if getattr(exc, "status_code", None) is not None:
                return  # the server answered; not every server serves /models
            raise ChatClientError(
                f"cannot reach the chat server at {self.base_url} ({type(exc).__name__})"
            ) from None
