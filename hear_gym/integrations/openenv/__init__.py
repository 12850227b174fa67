"""Every registered env as an OpenEnv server (``hear-gym serve``) and its client.

Needs the ``serve`` extra (``pip install 'hear-gym[serve]'``: OpenEnv's ``openenv`` package with
FastAPI and uvicorn); importing this package without it raises an ImportError that says so.
"""

from __future__ import annotations

try:
    import openenv.core  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:
    raise ImportError("hear_gym.integrations.openenv needs OpenEnv: pip install 'hear-gym[serve]'") from exc

from hear_gym.integrations.openenv.client import HearGymClient
from hear_gym.integrations.openenv.server import (
    HearGymEnvironment,
    ServedEnv,
    build_app,
    serve,
    serving_in_thread,
)

__all__ = ["HearGymClient", "HearGymEnvironment", "ServedEnv", "build_app", "serve", "serving_in_thread"]
