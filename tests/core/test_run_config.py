"""Cells and run configurations, the data every family's evaluation is described by."""

import pytest

from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_config import Cell, RunConfig


def test_a_cell_spec_takes_the_family_default_access_when_it_names_none():
    assert Cell.from_spec("text_only", default_access="A+T") == Cell("text_only", "A+T")
    assert Cell.from_spec("ppo:runs/x/final@T", default_access="A") == Cell("ppo:runs/x/final", "T")
    with_options = Cell.from_spec("state_aware@T+S", "T", (("feedback", "prosody"),))
    assert with_options.name == "state_aware@T+S/prosody"
    assert Cell.parse(with_options.name, ("feedback",)) == with_options


@pytest.mark.parametrize("spec", ["", "@T", "agent@"])
def test_a_malformed_cell_spec_is_refused(spec):
    with pytest.raises(ValueError, match="is not 'agent' or 'agent@ACCESS'"):
        Cell.from_spec(spec, default_access="T")


@pytest.mark.parametrize("env_id", env_ids())
def test_a_run_config_round_trips_through_json_for_every_family(env_id):
    env_family = family(env_id)
    options = tuple((key, "prosody") for key in env_family.cell_options)
    cell = Cell("random", env_family.access_conditions[0], options)
    config = RunConfig(env_id, (cell,), tuple(env_family.item_ids(env_family.splits[-1])[:2]), seed=3)
    assert RunConfig.from_json(config.to_json()) == config
