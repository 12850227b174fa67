"""The OpenEnv integration, imported as the server tests need it: skips the calling test module
when the integration's extra is not installed."""

from __future__ import annotations

from types import ModuleType

import pytest


def openenv_integration() -> ModuleType:
    return pytest.importorskip("hear_gym.integrations.openenv")
