"""Audio as binary WebSocket frames beside OpenEnv's JSON messages, for clients that ask.

OpenEnv's WebSocket protocol is one JSON text message per request and per answer, so a served
env's audio is a base64 string inside the JSON: a third more bytes, encoded and decoded at both
ends. A client that opens ``/ws`` with the header ``FRAMES_HEADER: binary`` (``HearGymClient``
does) gets each audio field as a binary frame sent right after the JSON answer that names it: in
the JSON the field holds ``FRAME_MARK`` and the frame's length (``frame:48000``), and the frame
holds the samples (PCM16 or float32, little-endian, as the field's codec says). Any other client
(OpenEnv's own, a browser, the HTTP endpoints) gets base64 as before, so the JSON protocol is
unchanged for them.

How the server knows: ``BinaryFrames`` (ASGI middleware) gives a connection that asked an outbox
in a context variable for as long as the connection lasts. A served env steps on the
connection's own task (``HearGymEnvironment.step_async``), so its codec sees the outbox,
leaves the samples there and writes the mark; the middleware sends what the outbox holds right
after the JSON answer.
"""

from __future__ import annotations

import base64
from contextvars import ContextVar
from typing import Any

FRAMES_HEADER = "x-hear-gym-frames"
BINARY = "binary"
FRAME_MARK = "frame:"  # ':' is outside the base64 alphabet: a mark is never mistaken for audio
_OBSERVATION_PREFIX = '{"type":"observation"'  # how OpenEnv's answer with an observation starts

_outbox: ContextVar[list[bytes] | None] = ContextVar("hear_gym_binary_outbox", default=None)


def wire_audio(raw: bytes) -> str:
    """The JSON value of an audio field holding ``raw``: on a connection that asked for binary
    frames, a mark naming the frame that follows (``raw`` waits in its outbox); else base64."""
    outbox = _outbox.get()
    if outbox is None:
        return base64.b64encode(raw).decode("ascii")
    outbox.append(raw)
    return f"{FRAME_MARK}{len(raw)}"


def frame_length(value: Any) -> int | None:
    """The length a mark announces (None when ``value`` is not a mark)."""
    if isinstance(value, str) and value.startswith(FRAME_MARK):
        return int(value[len(FRAME_MARK) :])
    return None


def audio_bytes(value: str | bytes) -> bytes:
    """An audio field's samples: its binary frame's bytes as they are, or its base64 decoded."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if frame_length(value) is not None:
        raise ValueError("this audio field names a binary frame that never arrived")
    return base64.b64decode(value)


def asks_binary(scope: dict) -> bool:
    return dict(scope.get("headers", [])).get(FRAMES_HEADER.encode("latin-1")) == BINARY.encode("latin-1")


class BinaryFrames:
    """ASGI middleware: a WebSocket connection that sends ``FRAMES_HEADER: binary`` gets the
    samples its answers name as binary frames, each right after its answer."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket" or not asks_binary(scope):
            return await self.app(scope, receive, send)
        outbox: list[bytes] = []

        async def send_with_frames(message: dict) -> None:
            await send(message)
            if message["type"] != "websocket.send" or not outbox:
                return
            frames = outbox.copy()
            outbox.clear()
            # only an observation names frames: an error answer drops what a failed step left
            if message.get("text", "").startswith(_OBSERVATION_PREFIX):
                for frame in frames:
                    await send({"type": "websocket.send", "bytes": frame})

        token = _outbox.set(outbox)
        try:
            await self.app(scope, receive, send_with_frames)
        finally:
            _outbox.reset(token)


__all__ = [
    "BINARY",
    "FRAMES_HEADER",
    "FRAME_MARK",
    "BinaryFrames",
    "audio_bytes",
    "frame_length",
    "wire_audio",
]
