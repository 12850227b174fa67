"""The client of a ``hear-gym serve`` server: OpenEnv's ``EnvClient`` (async; ``.sync()`` for
plain calls) over the server's WebSocket session, with models rebuilt from the server's
``/schema`` so it decodes any served env without building the env itself."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from hear_gym.integrations.openenv.codec import decode_observation
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
    default ``HEAR_GYM_SERVE_TOKEN`` from the environment, none when unset)."""

    def __init__(self, base_url: str, token: str | None = None, **kwargs: Any):
        super().__init__(base_url, **kwargs)
        token = os.environ.get(TOKEN_ENV) if token is None else token
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http_url = base_url.rstrip("/").replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        self._models: ServedModels | None = None
        # as EnvClient does: proxies from the environment, except for a server on this machine
        self._local = urlsplit(self._ws_url).hostname in ("localhost", "127.0.0.1", "::1")

    @property
    def models(self) -> ServedModels:
        if self._models is None:
            raise RuntimeError("connect first: the models come from the server's /schema")
        return self._models

    async def connect(self) -> HearGymClient:
        if self._models is None:
            async with httpx.AsyncClient(timeout=self._connect_timeout, trust_env=not self._local) as http:
                answer = await http.get(f"{self._http_url}/schema", headers=self._headers)
                answer.raise_for_status()
            self._models = models_from_schema(answer.json())
        if self._ws is None:
            # As EnvClient.connect, without per-message deflate: base64 audio hardly compresses,
            # and deflating it cost 3-6x the episode time of the audio conditions (measured).
            try:
                self._ws = await ws_connect(
                    self._ws_url,
                    open_timeout=self._connect_timeout,
                    max_size=self._max_message_size,
                    compression=None,
                    proxy=None if self._local else True,
                    additional_headers=self._headers,
                )
            except Exception as exc:
                raise ConnectionError(f"Failed to connect to {self._ws_url}: {exc}") from exc
        return self

    async def disconnect(self) -> None:
        # Ask the server to end the session and wait until it closes the connection: it frees the
        # session's slot before it closes, so a client that connects next finds the slot free.
        if self._ws is not None:
            try:
                await self._ws.send(json.dumps({"type": "close"}))
                await asyncio.wait_for(self._ws.wait_closed(), timeout=self._message_timeout)
            except (ConnectionClosed, TimeoutError):
                pass
        await super().disconnect()

    async def _send(self, message: dict[str, Any]) -> None:
        # A server at capacity accepts the connection, sends why it refuses the session and closes
        # it: a message sent after that fails, but the reason is still there to be received.
        try:
            await super()._send(message)
        except ConnectionClosed:
            pass

    def _step_payload(self, action: Any) -> dict[str, Any]:
        if not isinstance(action, self.models.action):
            # NumPy scalars (what ``np.flatnonzero`` or a policy hands back) as plain Python values
            action = self.models.action(action=action.item() if isinstance(action, np.generic) else action)
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ServedObservation]:
        fields = dict(payload["observation"])
        metadata = fields.pop("step_metadata", {})
        observation = self.models.observation(
            **fields, done=payload.get("done", False), reward=payload.get("reward"), metadata=metadata
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
