"""Agents are found under ``hear_gym.agents.<family>``; the groups used before (e.g.
``hear_gym.gate_agents``) are still read for one release, with a DeprecationWarning."""

import sys

import pytest

from hear_gym.cli.common import available_agents
from hear_gym.core.registry import env_ids, family


@pytest.mark.parametrize("env_id", env_ids())
def test_every_family_finds_its_agents_under_its_own_group(env_id, recwarn):
    agents = available_agents(family(env_id))
    assert agents and family(env_id).agent_group == f"hear_gym.agents.{family(env_id).name}"
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def _install_plugin(tmp_path, monkeypatch, group: str, name: str) -> None:
    """A distribution on ``sys.path`` that registers one agent under ``group``."""
    dist = tmp_path / "my_agents-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agents\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{name} = my_agents:Agent\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])


def test_an_agent_under_a_legacy_group_is_still_found_with_a_warning(tmp_path, monkeypatch):
    voicegate = family("hear_gym/VoiceGate-v0")
    _install_plugin(tmp_path, monkeypatch, "hear_gym.gate_agents", "my_gate")
    with pytest.warns(DeprecationWarning, match="hear_gym.agents.voicegate"):
        agents = available_agents(voicegate)
    assert "my_gate" in agents and "text_only" in agents


def test_an_agent_under_the_new_group_needs_no_legacy_group(tmp_path, monkeypatch, recwarn):
    _install_plugin(tmp_path, monkeypatch, "hear_gym.agents.onset", "my_onset")
    assert "my_onset" in available_agents(family("hear_gym/Onset-v0"))
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
