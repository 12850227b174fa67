"""``hear-gym view`` on a run of every registered env: the page's cells carry every episode's
return with a CI, each shown episode replays from its record to the record's return (families
that declare ``replay_replies``) and starts from the observation the env gives, and no string
in the data can end the page's data block."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner
from viewer_runs import CELL_OPTIONS, audio_access, legal_run

from hear_gym.cli.app import app
from hear_gym.core.registry import env_ids, family
from hear_gym.eval.viewer import DATA_MARK, page

HOSTILE = '</script><img src=x onerror="window.pwned=1"> & <b>'


def page_data(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S).group(1)
    return json.loads(block)


@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_runs_page_replays_its_episodes(env_id, tmp_path):
    run = legal_run(env_id, tmp_path / "run")
    out = tmp_path / "view.html"
    result = CliRunner().invoke(app, ["view", str(run), "--out", str(out), "--per-cell", "2"])
    assert result.exit_code == 0, result.output
    data = page_data(out.read_text())
    assert sorted(c["cell"] for c in data["cells"]) == sorted({e["cell"] for e in data["episodes"]})
    assert sum(c["episodes"] for c in data["cells"]) == 4
    env_family = family(env_id)
    for episode in data["episodes"]:
        turns = episode["turns"]
        env = gym.make(
            env_id,
            access=audio_access(env_id),
            **env_family.episode_kwargs([episode["item_id"]]),
            **dict(CELL_OPTIONS.get(env_id, ())),
        )
        first, _ = env.reset(seed=episode["seed"], options=env_family.reset_options(episode["item_id"]))
        assert turns[0]["texts"] == {k: v for k, v in first.items() if isinstance(v, str)}
        heard = int(first["audio_length"][0]) if "audio" in first else 0
        assert turns[0]["duration"] == heard / 16_000 and (turns[0]["audio"] is None) == (heard == 0)
        if (
            env_family.replay_replies is not None
            and env_family.replay_replies(_record(run, episode)) is not None
        ):
            assert episode["note"] == "", episode["note"]
            assert turns[-1]["running_return"] == pytest.approx(episode["return"], abs=1e-9)
            assert sum(t["reward"] for t in turns) == pytest.approx(episode["return"], abs=1e-9)


def _record(run, episode) -> dict:
    for line in (run / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        if (record["cell"], record["item_id"], record["rollout"]) == (
            episode["cell"],
            episode["item_id"],
            episode["rollout"],
        ):
            return record
    raise KeyError(episode["item_id"])


def test_no_string_ends_the_data_block():
    html = page({"cells": [], "episodes": [{"cell": HOSTILE, "turns": [{"reply": HOSTILE}]}]})
    assert (
        DATA_MARK not in html and "<img" not in html and "</script><" not in html.split('id="data">')[1][:200]
    )
    assert page_data(html)["episodes"][0]["turns"][0]["reply"] == HOSTILE


def test_view_refuses_a_folder_that_is_not_a_run(tmp_path):
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2 and "not an evaluation run folder" in result.output


def test_replay_notices_a_record_it_does_not_reproduce(tmp_path):
    from hear_gym.eval.episode_replay import replay_episode

    run = legal_run("hear_gym/Onset-v0", tmp_path / "run", episodes=1)
    record = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    assert replay_episode(record, "hear_gym/Onset-v0", {}, {}).matches
    record["predictions"] = ["Call-Tool" if p == "Wait" else "Wait" for p in record["predictions"]]
    replay = replay_episode(record, "hear_gym/Onset-v0", {}, {})
    assert not replay.matches and "does not reproduce" in replay.note
    assert np.isfinite(replay.turns[0].clip).all()
