"""What a served app answers before a request reaches OpenEnv's routes, and for user mistakes in
them: a request body over ``MAX_REQUEST_BYTES`` gets 413, a missing or wrong shared token 401 (the
WebSocket handshake 403), a ``SessionError`` (a bad reset, a step outside an episode) its 4xx with
the same one-line message the WebSocket path sends, and a request the models refuse 422 without
the offending input echoed back."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

MAX_REQUEST_BYTES = 1 << 20  # an HTTP body or a WebSocket message: replies are at most 4,096 chars
MAX_MESSAGE_CHARS = 300  # a user error's message, cut (a 1e6-element option is not echoed)
TOKEN_ENV = "HEAR_GYM_SERVE_TOKEN"  # where `hear-gym serve` and the client read a shared token
OPEN_PATHS = frozenset({"/health"})  # answered without the token (liveness probes)


class SessionError(ValueError):
    """A user mistake in a session request, answered with ``status_code`` over HTTP and with the
    same message (one line, at most ``MAX_MESSAGE_CHARS``) over the WebSocket."""

    def __init__(self, message: str, status_code: int = 400):
        line = " ".join(message.split())
        if len(line) > MAX_MESSAGE_CHARS:
            line = line[: MAX_MESSAGE_CHARS - 3] + "..."
        super().__init__(line)
        self.status_code = status_code


def user_error(exc: BaseException, status_code: int = 400) -> SessionError:
    """``exc`` (a ValueError, KeyError, ... an env raised for bad input) as a ``SessionError``;
    a KeyError's message without the quotes its ``str`` adds."""
    message = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    return SessionError(message, status_code)


async def _session_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SessionError)
    return JSONResponse({"detail": str(exc)}, status_code=exc.status_code)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{k: v for k, v in error.items() if k in ("type", "loc", "msg")} for error in exc.errors()]
    return JSONResponse({"detail": errors}, status_code=422)


class RequestGuard:
    """ASGI middleware: the shared token (when one is set) on every request but ``OPEN_PATHS``,
    then an HTTP body of at most ``max_bytes`` (read here, whole, and handed on)."""

    def __init__(self, app: Any, max_bytes: int = MAX_REQUEST_BYTES, token: str | None = None):
        self.app, self.max_bytes, self.token = app, max_bytes, token

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if self.token is not None and scope["path"] not in OPEN_PATHS and not self._authorized(scope):
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})  # handshake: 403
            return await _answer(
                scope, receive, send, 401, "missing or wrong token: send Authorization: Bearer TOKEN"
            )
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)  # message sizes: the server's ws_max_size
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await _answer(scope, receive, send, 413, self._too_large())
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                return await _answer(scope, receive, send, 413, self._too_large())
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _authorized(self, scope: dict) -> bool:
        given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        return hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode())

    def _too_large(self) -> str:
        return f"request body over {self.max_bytes} bytes"


async def _answer(scope: dict, receive: Any, send: Any, status_code: int, message: str) -> None:
    await JSONResponse({"detail": message}, status_code=status_code)(scope, receive, send)


def guard(app: FastAPI, token: str | None = None, max_bytes: int = MAX_REQUEST_BYTES) -> FastAPI:
    """``app`` with the error answers and the request guard above (``token``: None for none)."""
    if token is not None and not token:
        raise ValueError("the shared token must not be empty (leave it unset for none)")
    app.add_exception_handler(SessionError, _session_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_middleware(RequestGuard, max_bytes=max_bytes, token=token)
    return app


__all__ = ["MAX_REQUEST_BYTES", "TOKEN_ENV", "RequestGuard", "SessionError", "guard", "user_error"]
