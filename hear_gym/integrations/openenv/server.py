"""Any registered env as an OpenEnv server: an ``Environment`` class over ``gym.make``, and the
FastAPI app ``create_app`` builds from it (WebSocket sessions on ``/ws``, one env per session).

The served env is whatever ``gym.make(env_id, **make_kwargs)`` builds, so a family works here
through the family contract alone: its spaces give the models (``codec``, ``models``), its
``reset_options(item_id)`` lets a client ask for one item by id (OpenEnv's ``episode_id``).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from fastapi import FastAPI
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata

from hear_gym.core.registry import family, register_envs
from hear_gym.integrations.openenv.codec import action_codec, encode_observation, jsonable, observation_codecs
from hear_gym.integrations.openenv.frames import BinaryFrames
from hear_gym.integrations.openenv.guards import SessionError, guard, user_error
from hear_gym.integrations.openenv.limits import MemoryLimit
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
    """One session's env. ``reset(seed, episode_id, options)``: ``episode_id`` (OpenEnv's name) names
    an item of the family (its ``reset_options``); ``step(action)`` takes the generated Action. Each
    observation's ``metadata`` holds ``terminated`` and ``truncated`` apart (``done`` is either)
    and the env's ``info`` as JSON (the finished episode's record in ``info["episode"]``).

    Over the WebSocket a session steps on its connection's own task (``reset_async`` and
    ``step_async``), not on a thread of its own: a step is far shorter than the hop to a thread
    and back, one interpreter lock runs either way, and the codec sees whether the connection
    takes audio as binary frames (``frames``)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session builds its own env; no state is shared
    # OpenEnv then builds and closes every session's env on one shared thread, instead of keeping
    # an idle thread per session (hundreds of sessions, hundreds of threads)
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, served: ServedEnv):
        super().__init__()
        self._served = served
        self._env = served.make()
        self._default_seed = served.next_default_seed()
        self._make_kwargs = jsonable(served.make_kwargs)
        self._episode_id: str | None = None
        self._step_count = 0
        self._seed: int | None = None  # the last seeded reset's
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
        self._episode_id, self._step_count = episode_id, 0
        self._seed = seed if seed is not None else self._seed
        return self._observation(observation, None, False, False, info)

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        **unknown: Any,
    ) -> ServedObservation:
        return self.reset(seed, episode_id, options, **unknown)

    def step(self, action: Any, timeout_s: float | None = None, **unknown: Any) -> ServedObservation:
        if unknown:
            raise SessionError(f"step takes an action; got also {sorted(unknown)}")
        if self._episode_over is None:
            raise SessionError("step before reset: reset the session first", 409)
        if self._episode_over:
            raise SessionError("the episode has ended: reset the session to play another", 409)
        observation, reward, terminated, truncated, info = self._env.step(action.action)
        self._episode_over = bool(terminated or truncated)
        self._step_count += 1
        return self._observation(observation, float(reward), bool(terminated), bool(truncated), info)

    async def step_async(
        self, action: Any, timeout_s: float | None = None, **unknown: Any
    ) -> ServedObservation:
        return self.step(action, timeout_s, **unknown)

    @property
    def state(self) -> ServedState:
        return ServedState(
            episode_id=self._episode_id,
            step_count=self._step_count,
            env_id=self._served.env_id,
            make_kwargs=self._make_kwargs,
            seed=self._seed,
            worker_pid=os.getpid(),
        )

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
        # built unvalidated: every value comes from the codecs, already of its field's type
        return models.observation.model_construct(
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
    memory_limit_mb: float | None = None,
) -> FastAPI:
    """The OpenEnv app: at most ``max_concurrent_envs`` WebSocket sessions at once (one more is
    refused with CAPACITY_REACHED), a session idle for ``session_timeout`` seconds closed; while
    the process holds ``memory_limit_mb`` MiB or more, a new session is refused the same way
    (``limits``); audio as binary frames to clients that ask (``frames``); user mistakes answered
    with a 4xx, bodies over ``MAX_REQUEST_BYTES`` with 413 and, with a ``token``, any request
    without ``Authorization: Bearer TOKEN`` refused (``guards``)."""
    if memory_limit_mb is not None and not memory_limit_mb > 0:
        raise ValueError(f"the memory limit must be a positive number of MiB, got {memory_limit_mb}")
    app = create_app(
        functools.partial(HearGymEnvironment, served),
        served.models.action,
        served.models.observation,
        env_name=served.env_id,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_concurrent_envs, session_timeout=session_timeout
        ),
    )
    app.add_middleware(BinaryFrames)
    if memory_limit_mb is not None:
        app.add_middleware(MemoryLimit, limit_mb=memory_limit_mb)
    return guard(app, token)  # outermost: a request without the token learns nothing else
