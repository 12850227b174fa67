import functools
import gc
import os
import tempfile

import pytest
import typer.testing

# Renders, eSpeak's data overlay and disk caches go to a throwaway folder, not the user's cache.
os.environ.setdefault("HEAR_GYM_CACHE", tempfile.mkdtemp(prefix="hear_gym_test_cache_"))

import hear_gym  # noqa: F401  (registers the env ids)
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenario_bank

# Typer's CliRunner builds the whole click command tree at every invoke (45 ms for this app, 78
# invokes in the default tier); no test changes the app, so one tree serves them all. The hook
# is private to typer: when a release drops it, the tests only run slower.
if hasattr(typer.testing, "_get_command"):
    typer.testing._get_command = functools.cache(typer.testing._get_command)


@pytest.fixture(scope="session")
def bank():
    return scenario_bank()


@pytest.fixture(scope="session")
def real_models(tmp_path_factory):
    """Tiny models of real architectures with their real processors and chat templates, built
    offline once a session (``tests/real_models``): ``text`` (Qwen2.5-Instruct), ``audio``
    (Qwen2-Audio-Instruct), ``omni`` (a whole Qwen2.5-Omni checkpoint)."""
    from real_models.build import build_qwen2_5_instruct, build_qwen2_5_omni, build_qwen2_audio_instruct

    builders = {
        "text": build_qwen2_5_instruct,
        "audio": build_qwen2_audio_instruct,
        "omni": build_qwen2_5_omni,
    }
    folder = tmp_path_factory.mktemp("real_models")
    built: dict = {}

    def get(name: str):
        if name not in built:
            built[name] = builders[name](folder / name)
        return built[name]

    return get


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


def pytest_collection_finish(session):
    """What collection imported (torch, transformers, TRL, the envs' tables) lives as long as
    the session: frozen, it is no longer rescanned by each full collection (accelerate runs one
    for every trainer a test builds, about 0.5 s each at this heap size)."""
    gc.collect()
    gc.freeze()
