"""Any registered env as an OpenEnv server: an ``Environment`` class over ``gym.make``, and the
FastAPI app ``create_app`` builds from it (WebSocket sessions on ``/ws``, one env per session).

The served env is whatever ``gym.make(env_id, **make_kwargs)`` builds, so a family works here
through the family contract alone: its spaces give the models (``codec``, ``models``), its
``reset_options(episode_id)`` lets a client ask for one scenario or item by id.
"""

from __future__ import annotations

import functools
import itertools
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from fastapi import FastAPI
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata

from hear_gym.core.registry import family, register_envs
from hear_gym.integrations.openenv.codec import action_codec, encode_observation, jsonable, observation_codecs
from hear_gym.integrations.openenv.guards import MAX_REQUEST_BYTES, SessionError, guard, user_error
from hear_gym.integrations.openenv.models import ServedModels, ServedObservation, ServedState, build_models
from hear_gym.wrappers.reset_check import check_reset_arguments

# what a user can get wrong in a reset's arguments (an env's reset raises one of these, one line)
_BAD_ARGUMENTS = (ValueError, KeyError, IndexError, TypeError)


@dataclass
class ServedEnv:
    """What a server serves: ``gym.make(env_id, **make_kwargs)``, its audio sent as ``audio``
    (pcm16 or float32). A session whose first reset names no seed plays seed ``base_seed + k``
    for the k-th env the server built (so sessions differ but a server restarted in the same
    order replays them); pass a seed for episodes you mean to reproduce."""

    env_id: str
    make_kwargs: dict[str, Any] = field(default_factory=dict)
    audio: str = "pcm16"
    base_seed: int = 0
    models: ServedModels = field(init=False, repr=False)
    _built: itertools.count = field(default_factory=itertools.count, init=False, repr=False)

    def __post_init__(self) -> None:
        family(self.env_id)  # an unknown id fails here, with the registered ones listed
        register_envs()
        probe = self.make()  # the spaces, and any bad make kwarg refused before serving
        try:
            name = re.sub(r"\W", "", self.env_id.rpartition("/")[2].split("-")[0])
            self.models = build_models(
                name,
                observation_codecs(probe.observation_space, self.audio),
                action_codec(probe.action_space),
            )
        finally:
            probe.close()

    def make(self) -> gym.Env:
        return gym.make(self.env_id, **self.make_kwargs)

    def next_default_seed(self) -> int:
        return self.base_seed + next(self._built)


class HearGymEnvironment(Environment):
    """One session's env. ``reset(seed, episode_id, options)``: ``episode_id`` names a scenario or
    item of the family (its ``reset_options``); ``step(action)`` takes the generated Action. Each
    observation's ``metadata`` holds ``terminated`` and ``truncated`` apart (``done`` is either)
    and the env's ``info`` as JSON (the finished episode's record in ``info["episode"]``)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session builds its own env; no state is shared

    def __init__(self, served: ServedEnv):
        super().__init__()
        self._served = served
        self._env = served.make()
        self._default_seed = served.next_default_seed()
        self._state = ServedState(env_id=served.env_id, make_kwargs=jsonable(served.make_kwargs))
        self._episode_over: bool | None = None  # None: never reset

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        **unknown: Any,
    ) -> ServedObservation:
        if unknown:
            raise SessionError(f"reset takes seed, episode_id and options; got {sorted(unknown)}")
        if seed is None and self._episode_over is None:
            seed = self._default_seed
        try:
            if options is not None and not isinstance(options, dict):
                raise ValueError(f"reset options must be a dict or None, got {type(options).__name__}")
            if episode_id is not None and not isinstance(episode_id, str):
                raise ValueError(f"episode_id must be a string, got {type(episode_id).__name__}")
            reset_options = {
                **(family(self._served.env_id).reset_options(episode_id) if episode_id is not None else {}),
                **(options or {}),
            }
            check_reset_arguments(self._env, seed, reset_options or None)
        except _BAD_ARGUMENTS as exc:
            raise user_error(exc) from None
        observation, info = self._env.reset(seed=seed, options=reset_options or None)
        self._episode_over = False
        self._state = self._state.model_copy(
            update={
                "episode_id": episode_id,
                "step_count": 0,
                "seed": seed if seed is not None else self._state.seed,
            }
        )
        return self._observation(observation, None, False, False, info)

    def step(self, action: Any, timeout_s: float | None = None, **unknown: Any) -> ServedObservation:
        if unknown:
            raise SessionError(f"step takes an action; got also {sorted(unknown)}")
        if self._episode_over is None:
            raise SessionError("step before reset: reset the session first", 409)
        if self._episode_over:
            raise SessionError("the episode has ended: reset the session to play another", 409)
        observation, reward, terminated, truncated, info = self._env.step(action.action)
        self._episode_over = bool(terminated or truncated)
        self._state = self._state.model_copy(update={"step_count": self._state.step_count + 1})
        return self._observation(observation, float(reward), bool(terminated), bool(truncated), info)

    @property
    def state(self) -> ServedState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        from importlib.metadata import version

        return EnvironmentMetadata(
            name=self._served.env_id,
            description=f"hear_gym {self._served.env_id} with {self._served.make_kwargs}",
            version=version("hear-gym"),
        )

    def close(self) -> None:
        self._env.close()

    def _observation(
        self, observation: Any, reward: float | None, terminated: bool, truncated: bool, info: dict
    ) -> ServedObservation:
        models = self._served.models
        return models.observation(
            **encode_observation(models.observation_codecs, observation),
            done=terminated or truncated,
            reward=reward,
            metadata={"terminated": terminated, "truncated": truncated, "info": jsonable(info)},
        )


def build_app(
    served: ServedEnv,
    max_concurrent_envs: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
) -> FastAPI:
    """The OpenEnv app: at most ``max_concurrent_envs`` WebSocket sessions at once (one more is
    refused with CAPACITY_REACHED), a session idle for ``session_timeout`` seconds closed; user
    mistakes answered with a 4xx, bodies over ``MAX_REQUEST_BYTES`` with 413 and, with a ``token``,
    any request without ``Authorization: Bearer TOKEN`` refused (``guards``)."""
    app = create_app(
        functools.partial(HearGymEnvironment, served),
        served.models.action,
        served.models.observation,
        env_name=served.env_id,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_concurrent_envs, session_timeout=session_timeout
        ),
    )
    return guard(app, token)


def _uvicorn_config(app: FastAPI, host: str, port: int, log_level: str):
    import uvicorn

    # No per-message deflate: base64 audio hardly compresses, and deflating it cost 3-6x the
    # episode time of the audio conditions (measured), whatever the client offers.
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws_max_size=MAX_REQUEST_BYTES,
        ws_per_message_deflate=False,
    )


def serve(
    served: ServedEnv,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_concurrent_envs: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
) -> None:
    """Serve until interrupted (``hear-gym serve``). It has no accounts: on anything but this
    machine's loopback, set a ``token`` (and put TLS in front: the token travels in the clear)."""
    import uvicorn

    app = build_app(served, max_concurrent_envs, session_timeout, token)
    uvicorn.Server(_uvicorn_config(app, host, port, "info")).run()


@contextmanager
def serving_in_thread(
    served: ServedEnv,
    max_concurrent_envs: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
) -> Iterator[str]:
    """A server on a free local port, in a thread of this process, for as long as the block runs;
    yields its base URL (for notebooks and tests; ``hear-gym serve`` for anything else)."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build_app(served, max_concurrent_envs, session_timeout, token)
    server = uvicorn.Server(_uvicorn_config(app, "127.0.0.1", port, "warning"))
    thread = threading.Thread(target=server.run, name=f"openenv-{served.env_id}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server of {served.env_id} did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
