import os
import tempfile

import pytest

# Renders, eSpeak's data overlay and disk caches go to a throwaway folder, not the user's cache.
os.environ.setdefault("HEAR_GYM_CACHE", tempfile.mkdtemp(prefix="hear_gym_test_cache_"))

import hear_gym  # noqa: F401  (registers the env ids)
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenario_bank


@pytest.fixture(scope="session")
def bank():
    return scenario_bank()


@pytest.fixture
def airline():
    return get_scenario("budget_airline_tickets-00")


@pytest.fixture
def gpus(monkeypatch):
    """Make torch see ``count`` CUDA devices of compute capability ``major`` (0: no CUDA)."""
    import torch

    def see(count: int, major: int = 8) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (major, 0))
        monkeypatch.setattr(torch.version, "hip", None)

    return see


def pytest_collection_modifyitems(items):
    """Slow tests on the neural voice also get the ``neural`` mark: their own tier (`make
    test-neural`, over an hour on 2 cores), left out of `make test-slow` and CI."""
    for item in items:
        if item.get_closest_marker("slow") and "neural" in item.nodeid:
            item.add_marker(pytest.mark.neural)
