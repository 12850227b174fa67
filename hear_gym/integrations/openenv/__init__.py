"""Every registered env as an OpenEnv server (``hear-gym serve``) and its client.

Needs the ``serve`` extra (``pip install 'hear-gym[serve]'``: OpenEnv's ``openenv`` package with
FastAPI and uvicorn); importing this package without it raises an ImportError that says so.
"""

from __future__ import annotations

import sys

# OpenEnv imports gradio for its optional web UI, which nothing here uses and which is most of its
# import time (seconds: every server process and worker restart pays it). Hidden while OpenEnv is
# imported, OpenEnv leaves the UI out; a later `import gradio` works as usual.
_gradio_hidden = "gradio" not in sys.modules
if _gradio_hidden:
    sys.modules["gradio"] = None  # type: ignore[assignment]
try:
    import openenv.core  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:
    raise ImportError("hear_gym.integrations.openenv needs OpenEnv: pip install 'hear-gym[serve]'") from exc
finally:
    if _gradio_hidden:
        del sys.modules["gradio"]

from hear_gym.integrations.openenv.client import HearGymClient, SessionLost  # noqa: E402
from hear_gym.integrations.openenv.process import serve, serving_in_thread  # noqa: E402
from hear_gym.integrations.openenv.server import HearGymEnvironment, ServedEnv, build_app  # noqa: E402

__all__ = [
    "HearGymClient",
    "HearGymEnvironment",
    "ServedEnv",
    "SessionLost",
    "build_app",
    "serve",
    "serving_in_thread",
]
