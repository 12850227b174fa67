"""Chat clients: one small protocol, local and remote implementations.

* ``MockChatClient``: replies chosen by a function of the messages (or a fixed script); for tests
  and dry runs without a model.
* ``OpenAIChatClient`` (``agents.llm.openai_client``): any OpenAI-compatible chat-completions
  server (vLLM, SGLang, llama.cpp, a hosted API), audio parts sent as ``input_audio``.
* ``TransformersChatClient``: a local causal LM through transformers (``from_pretrained`` on a
  local folder, a cached hub id, or a LoRA adapter folder over such a model), greedy decoding, the
  tokenizer's chat template when it has one.
* ``TransformersAudioChatClient``: a local audio-language model (Qwen2-Audio; Qwen2.5-Omni, whose
  thinker alone is loaded; any checkpoint whose config names a generate-capable class), messages
  whose audio parts carry their clips (``agents.llm.parts``).

Every client answers ``complete(batch)``: one reply per chat, in order. A client that ``hears``
takes chats with audio parts. The local clients take a ``device`` (``agents.device``: ``auto``,
``cpu``, ``cuda``, ``cuda:N``), a ``dtype`` (``agents.llm.loading.DTYPES``), ``max_new_tokens``
and ``trust_remote_code``, and ``release()`` their model (its memory, on the GPU too) when a run is
done with it (``agents.llm.factory``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agents.device import resolve_device
from agents.llm.loading import (
    ChatClientError,
    load_audio_model,
    load_pretrained,
    load_processor,
    processing_source,
    torch_dtype,
)
from agents.llm.parts import SAMPLING_RATE, clips_of, has_audio, template_messages

Messages = list[dict[str, Any]]

__all__ = [
    "ChatClient",
    "ChatClientError",
    "MockChatClient",
    "TransformersAudioChatClient",
    "TransformersChatClient",
]


class ChatClient(Protocol):
    hears: bool  # takes chats with audio parts

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        """One reply per conversation, in order."""
        ...


class MockChatClient:
    hears = True

    def __init__(self, reply: Callable[[Messages], str]) -> None:
        self.reply = reply
        self.calls: list[Messages] = []

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        self.calls.extend(batch)
        return [self.reply(m) for m in batch]


def _pad_on_the_left(tokenizer) -> int:
    """Set ``tokenizer`` up for decoder-only batched generation (left padding, the end-of-text
    token as padding where it has none) and return its padding id."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer.pad_token_id


class _LocalClient:
    """What the transformers clients share: the device, the model's lifetime."""

    model: Any

    def release(self) -> None:
        """Free the model's memory (CPU and GPU); the client cannot answer afterwards."""
        self.model = None
        gc.collect()
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    def _generate(self, inputs) -> list[list[int]]:
        import torch

        if self.model is None:
            raise ChatClientError("this client released its model")
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=self.pad_token_id,
            )
        return output[:, inputs["input_ids"].shape[1] :]


class TransformersChatClient(_LocalClient):
    hears = False

    def __init__(
        self,
        model: str,
        max_new_tokens: int = 128,
        device: str = "auto",
        dtype: str = "auto",
        trust_remote_code: bool = False,
    ) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = resolve_device(device)  # a device this machine lacks fails before any loading
        self.tokenizer = AutoTokenizer.from_pretrained(
            processing_source(model), trust_remote_code=trust_remote_code
        )
        self.pad_token_id = _pad_on_the_left(self.tokenizer)
        weights = torch_dtype(dtype, self.device)
        self.model = load_pretrained(AutoModelForCausalLM, model, weights, trust_remote_code)
        self.model = self.model.to(self.device).eval()
        self.max_new_tokens = max_new_tokens

    def _prompt(self, messages: Messages) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        if any(has_audio(m) for m in batch):
            raise ChatClientError("a text model cannot hear: use an audio-language model (hf-audio:)")
        prompts = [self._prompt(m) for m in batch]
        inputs = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        return self.tokenizer.batch_decode(self._generate(inputs), skip_special_tokens=True)


class TransformersAudioChatClient(_LocalClient):
    hears = True

    def __init__(
        self,
        model: str,
        max_new_tokens: int = 128,
        device: str = "auto",
        dtype: str = "auto",
        trust_remote_code: bool = False,
    ) -> None:
        self.device = resolve_device(device)
        self.processor = load_processor(model, trust_remote_code)
        tokenizer = getattr(self.processor, "tokenizer", None)
        self.pad_token_id = None if tokenizer is None else _pad_on_the_left(tokenizer)
        weights = torch_dtype(dtype, self.device)
        self.model = load_audio_model(model, weights, trust_remote_code).to(self.device).eval()
        self.max_new_tokens = max_new_tokens

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        """One reply per chat; its audio parts carry their clips (16 kHz float arrays)."""
        texts = [
            self.processor.apply_chat_template(
                template_messages(m), tokenize=False, add_generation_prompt=True
            )
            for m in batch
        ]
        audio = [clip for m in batch for clip in clips_of(m)]
        inputs = self.processor(
            text=texts, audio=audio or None, sampling_rate=SAMPLING_RATE, return_tensors="pt", padding=True
        ).to(self.device)
        if "input_features" in inputs:  # the encoder computes in the model's dtype
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        return self.processor.batch_decode(self._generate(inputs), skip_special_tokens=True)
