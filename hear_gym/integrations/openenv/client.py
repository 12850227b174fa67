"""The client of a ``hear-gym serve`` server: OpenEnv's ``EnvClient`` over the server's WebSocket
session (async inside an event loop, plain calls outside one or through ``.sync()``), with models
rebuilt from the server's ``/schema`` so it decodes any served env without building the env, and
audio read from binary frames (``frames``) where the server sends them."""

from __future__ import annotations

import asyncio
import json
import os
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from hear_gym.integrations.openenv.codec import decode_observation
from hear_gym.integrations.openenv.frames import BINARY, FRAMES_HEADER, frame_length
from hear_gym.integrations.openenv.guards import TOKEN_ENV
from hear_gym.integrations.openenv.models import (
    ServedModels,
    ServedObservation,
    ServedState,
    models_from_schema,
)


class HearGymClient(EnvClient):
    """``reset(seed=..., episode_id=..., options=...)`` and ``step(action)`` return OpenEnv
    ``StepResult``s whose observation is the server's Observation model, its ``metadata``
    holding ``terminated``, ``truncated`` and ``info``; ``decode(observation)`` gives the
    observation as the env gives it in process (NumPy arrays, text, integers). An action is an
    integer or a string (or the Action model): it is checked against the action field here,
    before it is sent. ``token``: the server's shared token (``hear-gym serve --token``; by
    default ``HEAR_GYM_SERVE_TOKEN`` from the environment, none when unset). ``binary_frames``:
    ask for audio as binary frames (the default; a server that does not send them is read as
    well, base64 in the JSON).

    A session lives in one server process: when that process stops or restarts (``hear-gym
    serve --workers N`` restarts a worker that dies), the call in flight raises ``SessionLost``
    and the episode is gone; the next ``reset`` opens a new session."""

    def __init__(self, base_url: str, token: str | None = None, binary_frames: bool = True, **kwargs: Any):
        token = os.environ.get(TOKEN_ENV) if token is None else token
        headers = dict(kwargs.pop("headers", None) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if binary_frames:
            headers[FRAMES_HEADER] = BINARY
        super().__init__(base_url, headers=headers or None, **kwargs)
        self._models: ServedModels | None = None

    @property
    def models(self) -> ServedModels:
        if self._models is None:
            raise RuntimeError("connect first: the models come from the server's /schema")
        return self._models

    async def _connect_async(self) -> HearGymClient:
        if self._models is None:
            http_url = self.base_url.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
            local = urlsplit(http_url).hostname in ("localhost", "127.0.0.1", "::1")
            # as EnvClient does for its WebSocket: proxies from the environment, except for this machine
            async with httpx.AsyncClient(timeout=self._connect_timeout, trust_env=not local) as http:
                answer = await http.get(f"{http_url}/schema", headers=self._headers or {})
                answer.raise_for_status()
            self._models = models_from_schema(answer.json())
        await super()._connect_async()
        return self

    async def _disconnect_async(self) -> None:
        # Ask the server to end the session and wait until it closes the connection: it frees the
        # session's slot before it closes, so a client that connects next finds the slot free.
        ws = self._ws
        if ws is not None and self._ws_loop is asyncio.get_running_loop():
            with suppress(ConnectionClosed, TimeoutError):
                await ws.send(json.dumps({"type": "close"}))
                await asyncio.wait_for(ws.wait_closed(), timeout=self._message_timeout)
        await super()._disconnect_async()

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        ws = self._ws
        if ws is not None and ws.state in (State.CLOSING, State.CLOSED) and message.get("type") != "reset":
            # EnvClient would open a new session here and send this step to it, which answers
            # "step before reset": say instead what happened (a reset opens the new session)
            self._ws, self._ws_loop = None, None
            raise SessionLost(ws.close_code)
        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed as exc:
            raise SessionLost(exc.rcvd.code if exc.rcvd is not None else None) from exc

    async def _receive(self) -> dict[str, Any]:
        message = await super()._receive()
        if message.get("type") == "observation":
            fields = message.get("data", {}).get("observation", {})
            for codec in self.models.observation_codecs:
                if (length := frame_length(fields.get(codec.name))) is not None:
                    fields[codec.name] = await self._binary_frame(length)
        return message

    async def _binary_frame(self, length: int) -> bytes:
        """The binary frame a mark announced, read as the base class reads an answer: a frame
        that does not come in time leaves the socket out of step, so it is dropped."""
        ws = self._ws
        assert ws is not None
        try:
            frame = await asyncio.wait_for(ws.recv(), timeout=self._message_timeout)
        except (TimeoutError, asyncio.CancelledError):
            self._ws, self._ws_loop = None, None
            self._schedule_socket_close(ws)
            raise
        if not isinstance(frame, bytes) or len(frame) != length:
            self._ws, self._ws_loop = None, None
            self._schedule_socket_close(ws)
            got = f"{len(frame)} bytes" if isinstance(frame, bytes) else "a text frame"
            raise ConnectionError(
                f"expected a binary frame of {length} bytes, got {got}: the session was dropped"
            )
        return frame

    def _step_payload(self, action: Any) -> dict[str, Any]:
        if not isinstance(action, self.models.action):
            # NumPy scalars (what ``np.flatnonzero`` or a policy hands back) as plain Python values
            action = self.models.action(action=action.item() if isinstance(action, np.generic) else action)
        return {"action": action.action}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ServedObservation]:
        # not validated again: the server built the answer from the same models, and ``decode``
        # reads each field by its codec
        observation = self.models.observation.model_construct(
            **payload["observation"], done=payload.get("done", False), reward=payload.get("reward")
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> ServedState:
        return ServedState(**payload)

    def decode(self, observation: ServedObservation) -> Any:
        """The observation as the env gives it in process: NumPy arrays of the space's dtype and
        shape (audio padded back to its full buffer), text and integers as they are."""
        codecs = self.models.observation_codecs
        return decode_observation(codecs, {codec.name: getattr(observation, codec.name) for codec in codecs})


class SessionLost(ConnectionError):
    """The server closed a session mid-episode (its process stopped or restarted): the episode is
    lost, and the next ``reset`` opens a new session."""

    def __init__(self, code: int | None):
        code = 1006 if code is None else code  # 1006: the connection ended without a close frame
        why = {
            1006: "the server process holding it stopped or restarted",
            1012: "the server process holding it stopped or restarted",
        }.get(code, "the server ended it (an idle session past --session-timeout, a server shut down)")
        super().__init__(
            f"the server closed this session (WebSocket code {code}): {why}, and the episode in "
            "progress is lost; reset() opens a new session"
        )
        self.code = code
