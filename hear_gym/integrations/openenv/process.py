"""How a served app runs: one uvicorn process (``serve``), several worker processes behind one
address (``serve --workers N``, the way OpenEnv scales a server on one host: uvicorn's workers,
each with its own sessions), or a thread of this process (``serving_in_thread``).

With workers, uvicorn's parent process binds the address and each worker accepts connections on
it, so a session (one WebSocket connection) lives in one worker from its first message to its
last. The parent starts a new worker when one dies; the sessions the dead one held are lost, and
their clients get ``SessionLost`` (``client``). Each worker builds the app from a spec that the
parent leaves in the environment (``SPEC_ENV``), since workers are fresh interpreters.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI

from hear_gym.integrations.openenv.guards import MAX_REQUEST_BYTES
from hear_gym.integrations.openenv.server import ServedEnv, build_app

SPEC_ENV = "HEAR_GYM_SERVE_WORKER_SPEC"  # the JSON each worker builds its app from
# How long a worker may take to answer the parent's liveness check. A fresh worker answers only
# once its interpreter has imported the command's modules (seconds on a loaded machine, beyond
# uvicorn's 5 s default, which then kills and restarts it forever); a worker that exits is seen
# at once whatever this is.
WORKER_HEALTHCHECK_S = 60


def _uvicorn_config(app: FastAPI | str, host: str, port: int, log_level: str, **more: Any) -> uvicorn.Config:
    # No per-message deflate: audio hardly compresses, and deflating base64 audio cost 3-6x the
    # episode time of the audio conditions (measured), whatever the client offers.
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws_max_size=MAX_REQUEST_BYTES,
        ws_per_message_deflate=False,
        **more,
    )


def serve(
    served: ServedEnv,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_concurrent_envs: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
    workers: int = 1,
    memory_limit_mb: float | None = None,
) -> None:
    """Serve until interrupted (``hear-gym serve``): ``workers`` processes, each with at most
    ``max_concurrent_envs`` sessions and ``memory_limit_mb`` (``build_app``). It has no accounts:
    on anything but this machine's loopback, set a ``token`` (and put TLS in front: the token
    travels in the clear)."""
    limits = {
        "max_concurrent_envs": max_concurrent_envs,
        "session_timeout": session_timeout,
        "token": token,
        "memory_limit_mb": memory_limit_mb,
    }
    if workers == 1:
        uvicorn.Server(_uvicorn_config(build_app(served, **limits), host, port, "info")).run()
        return
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    spec = {
        "env_id": served.env_id,
        "make_kwargs": served.make_kwargs,
        "audio": served.audio,
        "base_seed": served.base_seed,
        **limits,
    }
    try:
        os.environ[SPEC_ENV] = json.dumps(spec, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"workers rebuild the env from JSON: its make kwargs must be JSON values ({exc})"
        ) from None
    from uvicorn.supervisors import Multiprocess

    config = _uvicorn_config(
        f"{__name__}:worker_app",
        host,
        port,
        "info",
        factory=True,
        workers=workers,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
    )
    Multiprocess(config, sockets=[config.bind_socket()]).run()


def worker_app() -> FastAPI:
    """A worker's app, built from the spec its parent left in ``SPEC_ENV``."""
    spec = json.loads(os.environ[SPEC_ENV])
    served = ServedEnv(
        spec.pop("env_id"), spec.pop("make_kwargs"), audio=spec.pop("audio"), base_seed=spec.pop("base_seed")
    )
    return build_app(served, **spec)


@contextmanager
def serving_in_thread(
    served: ServedEnv,
    max_concurrent_envs: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
    memory_limit_mb: float | None = None,
) -> Iterator[str]:
    """A server on a free local port, in a thread of this process, for as long as the block runs;
    yields its base URL (for notebooks and tests; ``hear-gym serve`` for anything else)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build_app(served, max_concurrent_envs, session_timeout, token, memory_limit_mb)
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
