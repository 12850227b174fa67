"""Onset speaks with the chosen renderer: the env kwarg, the CLI's ``--renderer`` (eval, listen,
render), the disk cache of source renderings, and the probe agents learning from that renderer."""

import json

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from agents.onset.baselines import AudioProbeAgent
from hear_gym.cli.app import app
from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.scenes import build_group, rendered_group, source_cache

GROUP = "book_uncertainty-00"  # the test split's first group: eval --limit 2 plays its branch a


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_the_env_speaks_with_its_renderer_and_refuses_unknown_ones():
    episode = f"{GROUP}/a/clean"
    env = gym.make("hear_gym/Onset-v0", access="A", renderer="praat", item_ids=[episode])
    obs, _ = env.reset(seed=0, options={"item_id": episode})
    praat = rendered_group(GROUP, "praat")
    assert praat.manifest["renderer"]["name"] == "praat"
    assert obs["audio"][: obs["audio_length"][0]].tobytes() == praat.prefix("a", "clean", 0).tobytes()
    assert praat.prefix("a", "clean", 0).tobytes() != rendered_group(GROUP).prefix("a", "clean", 0).tobytes()
    with pytest.raises(ValueError, match="unknown renderer 'nope'.*espeak"):
        gym.make("hear_gym/Onset-v0", renderer="nope")
    with pytest.raises(ValueError, match="renderer must be a renderer name"):
        gym.make("hear_gym/Onset-v0", renderer=["praat"])


def test_eval_and_listen_honour_the_renderer(tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "eval", "--env", "hear_gym/Onset-v0", "--renderer", "praat", "--limit", "2", "--out", str(out),
        "--cell", "endpoint_plurality@A", "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    config = json.loads((out / "metadata.json").read_text())["config"]
    assert ["renderer", "praat"] in config["env_kwargs"]
    first = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    group, branch, rendering = first["item_id"].split("/")
    expected = rendered_group(group, "praat").manifest["pcm16_sha256"][f"{branch}/{rendering}"]
    assert first["audio"]["pcm16_sha256"] == expected

    result = invoke(
        "listen", GROUP, "--env", "hear_gym/Onset-v0", "--renderer", "praat", "--out", str(tmp_path)
    )
    assert result.exit_code == 0, result.output
    sidecar = json.loads((tmp_path / GROUP / "group.json").read_text())
    assert sidecar["manifest"]["renderer"]["name"] == "praat"
    for command in (["listen", GROUP], ["eval"]):
        bad = invoke(
            *command, "--env", "hear_gym/Onset-v0", "--renderer", "nope", "--out", str(tmp_path / "x")
        )
        assert bad.exit_code == 2 and "unknown renderer" in bad.output


def test_probe_agents_learn_from_the_runs_renderer():
    agent = AudioProbeAgent()
    agent.configure({"renderer": "praat", "split": "test"})
    assert agent.renderer == "praat" and agent.probe is None  # fitted before its first decision


@pytest.mark.slow
def test_render_fills_the_disk_cache_that_the_env_reads(tmp_path):
    cache = tmp_path / "cache"
    result = invoke("render", "--env", "hear_gym/Onset-v0", "--split", "dev", "--cache-dir", str(cache))
    assert result.exit_code == 0, result.output
    groups = {g for g in groups_by_id().values() if g.split == "dev"}
    assert f"{3 * len(groups)} utterances rendered" in result.output
    source_cache.cache_clear()  # a fresh process's view: nothing in memory
    group = sorted(groups, key=lambda g: g.group_id)[0]
    from_disk = build_group(group, "espeak", cache)
    assert source_cache("espeak", cache).stats.disk_hits == 3
    assert from_disk.manifest["pcm16_sha256"] == build_group(group).manifest["pcm16_sha256"]
