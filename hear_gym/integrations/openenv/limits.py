"""A server process's memory limit: while it holds ``limit_mb`` MiB or more (resident), a new
session is refused with one line saying so, and sessions already open go on.

What one session can hold is bounded by construction: its env (an episode ends within the env's
turn limit; the render and feature caches are shared by the process and bounded), one request
of at most ``guards.MAX_REQUEST_BYTES`` (uvicorn stops reading a connection while a request
waits) and one answer. So a process stays within the limit plus the sessions admitted just below
it, and ``--max-concurrent-envs`` bounds how many there are.
"""

from __future__ import annotations

import json
from typing import Any

import psutil
from fastapi.responses import JSONResponse

SESSION_PATHS = frozenset({"/ws", "/reset", "/step"})  # each builds an env
CAPACITY_REACHED = "CAPACITY_REACHED"  # OpenEnv's code for a session refused for capacity
TRY_AGAIN_LATER = 1013  # the WebSocket close code for a refusal that may pass later


def resident_mb() -> float:
    """This process's resident memory, in MiB."""
    return psutil.Process().memory_info().rss / 2**20


class MemoryLimit:
    """ASGI middleware: a WebSocket session (``/ws``), or an HTTP ``/reset`` or ``/step`` (each
    builds an env), is refused while the process holds ``limit_mb`` MiB or more: the WebSocket
    with OpenEnv's error answer (code CAPACITY_REACHED, as for too many sessions) and close code
    1013, HTTP with 503."""

    def __init__(self, app: Any, limit_mb: float):
        self.app, self.limit_mb = app, limit_mb

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] not in SESSION_PATHS:
            return await self.app(scope, receive, send)
        held = resident_mb()
        if held < self.limit_mb:
            return await self.app(scope, receive, send)
        message = (
            f"server at its memory limit ({held:.0f} MiB resident, limit {self.limit_mb:g} MiB): "
            "no new session until sessions close; sessions already open go on"
        )
        if scope["type"] == "http":
            return await JSONResponse({"detail": message}, status_code=503)(scope, receive, send)
        if (await receive())["type"] != "websocket.connect":
            return  # the client went away before its handshake
        await send({"type": "websocket.accept"})
        answer = {"type": "error", "data": {"message": message, "code": CAPACITY_REACHED}}
        await send({"type": "websocket.send", "text": json.dumps(answer)})
        await send({"type": "websocket.close", "code": TRY_AGAIN_LATER})


__all__ = ["MemoryLimit", "resident_mb"]
