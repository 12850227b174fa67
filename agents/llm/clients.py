"""Chat clients: one small protocol, three implementations.

* ``MockChatClient``: replies chosen by a function of the messages (or a fixed script); for tests
  and dry runs without a model.
* ``OpenAIChatClient``: any OpenAI-compatible ``/v1/chat/completions`` server (vLLM, TGI...),
  over the standard library's HTTP client; offline by construction unless you point it at a
  server.
* ``TransformersChatClient``: a local causal LM through transformers (``from_pretrained`` on a
  local folder, a cached hub id, or a LoRA adapter folder over such a model), greedy decoding, the tokenizer's chat template when it has one.
  Both transformers clients take a ``device`` (``agents.device``: ``auto``, ``cpu``, ``cuda``,
  ``cuda:N``; default ``auto``) and load the model in bfloat16 on a GPU that has it, else float32.
* ``TransformersAudioChatClient``: an audio-language model (Qwen2-Audio / Qwen2.5-Omni style:
  a processor taking text and 16 kHz audio, a generate-capable model class named in the
  checkpoint's config), messages whose user content holds ``{"type": "audio"}`` parts.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from agents.device import model_dtype, resolve_device

Messages = list[dict[str, str]]


class ChatClient(Protocol):
    def complete(self, batch: Sequence[Messages]) -> list[str]:
        """One reply per conversation, in order."""
        ...


class MockChatClient:
    def __init__(self, reply: Callable[[Messages], str]) -> None:
        self.reply = reply
        self.calls: list[Messages] = []

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        self.calls.extend(batch)
        return [self.reply(m) for m in batch]


class ChatClientError(RuntimeError):
    pass


def locate_model(name: str) -> str:
    """``name`` if it is a local model folder or a hub id already in the local Hugging Face
    cache; nothing is ever downloaded, so anything else is a clear error before loading."""
    if Path(name).is_dir():
        return name
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except ValueError:  # not even a valid hub id
        cached = None
    if not isinstance(cached, str):
        raise ChatClientError(
            f"model {name!r} is neither a local folder nor in the Hugging Face cache "
            "(no downloads here): pass the folder that holds the checkpoint"
        )
    return name


def is_adapter(name: str) -> bool:
    """Whether ``name`` is a LoRA adapter folder (peft's ``adapter_config.json``)."""
    return (Path(name) / "adapter_config.json").is_file()


def base_model_of(name: str) -> str:
    """The checkpoint itself, or an adapter's base model; either must be on this machine."""
    if not is_adapter(name):
        return locate_model(name)
    from peft import PeftConfig

    base = PeftConfig.from_pretrained(name).base_model_name_or_path
    try:
        return locate_model(base)
    except ChatClientError as exc:
        raise ChatClientError(f"adapter {name}: its base model cannot be loaded: {exc}") from None


def load_pretrained(model_class, name: str, dtype=None):
    """``model_class.from_pretrained`` on a checkpoint, or on a LoRA adapter folder (peft's
    ``adapter_config.json``): its base model with the adapter merged in for inference. The weights
    load in ``dtype``, float32 by default (what the trainers train, autocasting to bfloat16 on a
    GPU), never in the checkpoint's own dtype (transformers' default), which is bfloat16 for most
    released models and slow on a CPU."""
    import torch

    dtype = dtype or torch.float32
    base = base_model_of(name)
    if base == name:
        return model_class.from_pretrained(base, dtype=dtype)
    from peft import PeftModel

    return PeftModel.from_pretrained(model_class.from_pretrained(base, dtype=dtype), name).merge_and_unload()


def processing_source(name: str) -> str:
    """Where the tokenizer or processor lives: the checkpoint, or an adapter folder when the
    trainer saved one there, else the adapter's base model."""
    if not is_adapter(name):
        return locate_model(name)
    if any((Path(name) / f).is_file() for f in ("tokenizer_config.json", "processor_config.json")):
        return name
    return base_model_of(name)


class OpenAIChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        timeout_s: float = 120.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key = model, api_key
        self.temperature, self.max_tokens, self.timeout_s = temperature, max_tokens, timeout_s

    def _one(self, messages: Messages) -> str:
        body = json.dumps(
            {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
            }
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read())
        except (urllib.error.URLError, TimeoutError) as exc:
            raise ChatClientError(f"chat server {self.url} failed: {exc}") from exc
        try:
            return payload["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise ChatClientError(f"unexpected reply from {self.url}: {str(payload)[:200]}") from exc

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        return [self._one(m) for m in batch]

    def check(self, timeout_s: float = 5.0) -> None:
        """Fail fast (``ChatClientError``) when the server cannot be reached."""
        request = urllib.request.Request(
            self.url.rsplit("/chat/completions", 1)[0] + "/models",
            headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key else {},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s):
                pass
        except urllib.error.HTTPError:
            pass  # the server answered; not every server serves /models
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ChatClientError(f"cannot reach the chat server at {request.full_url} ({reason})") from None


class TransformersChatClient:
    def __init__(self, model: str, max_new_tokens: int = 128, device: str = "auto") -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = resolve_device(device)  # a device this machine lacks fails before any loading
        self.tokenizer = AutoTokenizer.from_pretrained(processing_source(model))
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"  # decoder-only batched generation
        self.model = load_pretrained(AutoModelForCausalLM, model, model_dtype(self.device))
        self.model = self.model.to(self.device).eval()
        self.max_new_tokens = max_new_tokens

    def _prompt(self, messages: Messages) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"

    def complete(self, batch: Sequence[Messages]) -> list[str]:
        import torch

        inputs = self.tokenizer([self._prompt(m) for m in batch], return_tensors="pt", padding=True).to(
            self.device
        )
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = output[:, inputs["input_ids"].shape[1] :]
        return self.tokenizer.batch_decode(new, skip_special_tokens=True)


class TransformersAudioChatClient:
    def __init__(self, model: str, max_new_tokens: int = 128, device: str = "auto") -> None:
        import transformers

        self.device = resolve_device(device)
        self.processor = transformers.AutoProcessor.from_pretrained(processing_source(model))
        tokenizer = getattr(self.processor, "tokenizer", None)
        if tokenizer is not None:  # decoder-only batched generation pads on the left
            tokenizer.padding_side = "left"
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
        config = transformers.AutoConfig.from_pretrained(base_model_of(model))
        model_class = getattr(transformers, (config.architectures or ["AutoModel"])[0])
        self.model = load_pretrained(model_class, model, model_dtype(self.device)).to(self.device).eval()
        self.max_new_tokens = max_new_tokens

    def complete_audio(self, batch: Sequence[tuple[Messages, list]]) -> list[str]:
        """One reply per (messages, audio clips) pair; clips are 16 kHz float arrays, one per
        ``{"type": "audio"}`` part, in order."""
        import torch

        texts = [
            self.processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
            for m, _ in batch
        ]
        audio = [clip for _, clips in batch for clip in clips]
        inputs = self.processor(
            text=texts, audio=audio or None, sampling_rate=16_000, return_tensors="pt", padding=True
        ).to(self.device)
        with torch.no_grad():
            output = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new = output[:, inputs["input_ids"].shape[1] :]
        return self.processor.batch_decode(new, skip_special_tokens=True)
