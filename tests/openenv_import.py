"""The OpenEnv integration, imported as the server tests need it.

OpenEnv imports gradio for its optional web UI (ENABLE_WEB_INTERFACE), which nothing here uses
and which is most of its import time: hidden while OpenEnv is imported, OpenEnv leaves the web UI
out. Skips the calling test module when the integration's extra is not installed."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest


def openenv_integration() -> ModuleType:
    gradio_hidden = "gradio" not in sys.modules
    if gradio_hidden:
        sys.modules["gradio"] = None
    try:
        return pytest.importorskip("hear_gym.integrations.openenv")
    finally:
        if gradio_hidden:
            del sys.modules["gradio"]
