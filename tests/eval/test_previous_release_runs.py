"""Run folders the previous release wrote still read, summarize and resume.

``data/previous_release/<env>/`` holds interrupted runs (two of four episodes written) made by the
previous release's runner: its rows name the item ``episode_id`` (Hear2Act's also ``scenario_id``)
and its ``run_config.json`` lists ``episode_ids``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agents.onset.baselines import AlwaysWaitAgent
from agents.random_agent import RandomAgent
from agents.voicegate.baselines import AlwaysMuteAgent
from hear_gym.core.registry import family
from hear_gym.core.run_config import RunConfig
from hear_gym.eval import evaluate, read_results
from hear_gym.eval.results import CONFIG_FILE, RESULTS_FILE

PREVIOUS = Path(__file__).parent / "data" / "previous_release"
AGENTS = {"random": RandomAgent, "always_mute": AlwaysMuteAgent, "always_wait": AlwaysWaitAgent}
OLD_ITEM_FIELDS = {"episode_id", "scenario_id"}


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(PREVIOUS / name, folder)
    return folder


@pytest.mark.parametrize("name", ["hear2act", "voicegate", "onset"])
def test_old_rows_read_under_item_id(tmp_path, name):
    folder = _folder(tmp_path, name)
    raw = [json.loads(line) for line in (folder / RESULTS_FILE).read_text().splitlines()]
    assert all("item_id" not in row or "episode_id" in row for row in raw)  # the fixture is in the old form
    records = read_results(folder / RESULTS_FILE)
    assert [r["item_id"] for r in records] == [r["episode_id"] for r in raw]
    assert not any(OLD_ITEM_FIELDS & set(r) for r in records)


@pytest.mark.parametrize("name", ["hear2act", "voicegate", "onset"])
def test_an_old_interrupted_run_resumes_and_summarizes(tmp_path, name):
    folder = _folder(tmp_path, name)
    before = (folder / RESULTS_FILE).read_text()
    old = json.loads((folder / CONFIG_FILE).read_text())
    assert "episode_ids" in old and "item_ids" not in old
    # the configuration today's code builds for the same run: resuming accepts it as the same one
    config = RunConfig(
        old["env_id"], RunConfig.from_json(old).cells, tuple(old["episode_ids"]), seed=old["seed"]
    )
    metadata = evaluate(folder, config, AGENTS, progress=False)

    after = (folder / RESULTS_FILE).read_text()
    assert after.startswith(before)  # nothing already written is rewritten
    records = read_results(folder / RESULTS_FILE)
    assert sorted(r["item_id"] for r in records) == sorted(old["episode_ids"])  # each item once
    new_rows = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert len(new_rows) == 2 and all("item_id" in r and not OLD_ITEM_FIELDS & set(r) for r in new_rows)
    assert metadata["n_episodes"] == 4 and metadata["config"]["item_ids"] == old["episode_ids"]


def test_old_onset_rows_read_their_family_as_domain(tmp_path):
    folder = _folder(tmp_path, "onset")
    raw = [json.loads(line) for line in (folder / RESULTS_FILE).read_text().splitlines()]
    assert all("family" in row and "domain" not in row for row in raw)  # the fixture is in the old form
    records = read_results(folder / RESULTS_FILE, family("hear_gym/Onset-v0").renamed_record_fields)
    assert [r["domain"] for r in records] == [r["family"] for r in raw]
    assert not any("family" in r for r in records)
