"""A fixture that rebuilds the Ambiguity suite, so that a test can put a leaky construction back
(monkeypatch a frame table or builder) and show that its shortcut check then fails."""

import pytest

from hear_gym.envs.ambiguity.items import generator


def _forget_suite() -> None:
    for built in (
        generator.all_items,
        generator.all_episodes,
        generator.episodes_by_id,
        generator.item_ids,
    ):
        built.cache_clear()


@pytest.fixture
def rebuilt_suite(monkeypatch):
    """``monkeypatch`` with the suite's caches cleared before the test and after it (the patched
    construction is built on the first ``all_items()`` and forgotten when the test ends)."""
    _forget_suite()
    yield monkeypatch
    monkeypatch.undo()
    _forget_suite()
