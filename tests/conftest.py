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
