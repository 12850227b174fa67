"""Every registered env's OpenEnv app with its defaults, by family name, for tools that import an
ASGI app (the ``app`` of its ``openenv.yaml``): ``hear_gym.integrations.openenv.apps:hear2act``.
Each is built on first use. ``hear-gym serve`` serves the same app with the limits it sets on the
server (a WebSocket message over 1 MiB refused, no per-message deflate): a server started from
the import string alone gets its own server's defaults."""

from __future__ import annotations

from functools import cache

from fastapi import FastAPI

from hear_gym.core.registry import env_ids, family
from hear_gym.integrations.openenv.server import ServedEnv, build_app


@cache
def app_for(name: str) -> FastAPI:
    """The app of the family named ``name`` (``hear2act``, ``voicegate``, ...)."""
    by_name = {family(env_id).name: env_id for env_id in env_ids()}
    if name not in by_name:
        raise AttributeError(f"no registered env family named {name!r}; registered: {sorted(by_name)}")
    return build_app(ServedEnv(by_name[name]))


def __getattr__(name: str) -> FastAPI:
    if name.startswith("__"):
        raise AttributeError(name)
    return app_for(name)
