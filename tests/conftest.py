import pytest

import hear_gym  # noqa: F401  (registers the env ids)
from hear_gym.scenarios.bank import get_scenario, scenario_bank


@pytest.fixture(scope="session")
def bank():
    return scenario_bank()


@pytest.fixture
def airline():
    return get_scenario("budget_airline_tickets-00")
