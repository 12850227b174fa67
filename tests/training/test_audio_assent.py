"""Audio GRPO on Hear2Act assent pairs: the two sides of a pair have the same chat and their own
clip, which is what the audio agent hears at that decision point; a paired run logs the reward
per side and plays whole held-out dialogues as audio_llm@A+T; the CLI takes the combination."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from reward_spies import record_reward_calls

from agents.audio_material import AUDIO_ACCESS, audio_keys, audio_parts
from agents.hear2act.assent_pairs import AssentReward, Replay, assent_pairs
from agents.hear2act.audio_assent import assent_rows
from agents.hear2act.llm import AudioLLMAgent
from agents.llm.parts import clips_of
from hear_gym.envs.hear2act.user.realizer import SHARED_ACCEPTANCE_POOL
from training.llm.audio_grpo import AudioGRPOSettings, train_audio_grpo
from training.llm.paired_grpo import minus_side
from training.tiny_model import build_tiny_audio_lm


@pytest.fixture(scope="module")
def pairs():
    return assent_pairs("train", limit=2, seed=0)


@pytest.fixture(scope="module")
def tiny_audio(tmp_path_factory) -> Path:
    return build_tiny_audio_lm(tmp_path_factory.mktemp("models") / "tiny_audio")


def _without_audio_key(prompt):
    return [
        {**m, "content": [{k: v for k, v in p.items() if k != "audio"} for p in m["content"]]} for m in prompt
    ]


def test_pair_sides_share_the_transcript_and_differ_in_the_clip(pairs):
    rows, clips = assent_rows(pairs)
    assert len(rows) == 2 and len(clips) == 4
    for pair, row in zip(pairs, rows, strict=True):
        assert (row["item_id"], row["item_id_minus"]) == (
            pair.item_id("resolved"),
            pair.item_id("unresolved"),
        )
        assert row["item_family"] == "hear2act_assent"
        assert _without_audio_key(row["prompt"]) == _without_audio_key(row["prompt_minus"])
        words = row["prompt"][1]["content"][1]["text"]
        assert words == pair.resolved.transcript and words.rsplit("\nUser: ", 1)[1] in SHARED_ACCEPTANCE_POOL
        assert audio_keys(row["prompt"]) == [row["item_id"]]
        assert audio_keys(minus_side(row)["prompt"]) == [row["item_id_minus"]]  # the swap carries the audio
        plus, minus = clips[row["item_id"]], clips[row["item_id_minus"]]
        assert plus.dtype == minus.dtype == np.float32 and not np.array_equal(plus, minus)
    unpaired, _ = assent_rows(pairs[:1], paired=False)
    assert (
        [r["item_id"] for r in unpaired]
        == [r["item_id_minus"] for r in unpaired]
        == [
            pairs[0].item_id("resolved"),
            pairs[0].item_id("unresolved"),
        ]
    )


class _Recording:
    """An audio chat client that remembers what it was asked."""

    hears = True

    def __init__(self) -> None:
        self.batches = []

    def complete(self, batch):
        self.batches.append(batch)
        return ["[ACTION: CONFIRM] Done."] * len(batch)


def test_each_side_is_what_the_audio_agent_hears_there(pairs):
    rows, clips = assent_rows(pairs[:1])
    prompts = {rows[0]["item_id"]: rows[0]["prompt"], rows[0]["item_id_minus"]: rows[0]["prompt_minus"]}
    replay, client = Replay(AUDIO_ACCESS, feedback="prosody"), _Recording()
    try:
        for side, point in pairs[0].sides():
            item_id = pairs[0].item_id(side)
            observation, _ = replay.to(point)
            AudioLLMAgent(client).act(observation)
            (messages,) = client.batches[-1]
            (heard,) = clips_of(messages)  # the audio part carries the clip
            assert audio_parts(messages, audio_key=item_id) == prompts[item_id]
            assert np.array_equal(heard, clips[item_id])
            assert len(heard) == observation["audio_length"][0] > 0  # the assent turn, without padding
    finally:
        replay.close()


def _curve(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]


def test_paired_audio_grpo_on_two_pairs_logs_each_side_and_plays_dialogues(tiny_audio, tmp_path, monkeypatch):
    seen = record_reward_calls(monkeypatch, AssentReward)
    out = tmp_path / "assent"
    result = train_audio_grpo(
        out=out,
        model=str(tiny_audio),
        task="hear2act_assent",
        env_options={"reward": "tiered", "turn_cost": 0.02},
        item_limit=2,
        num_generations=4,
        batch_size=8,
        max_steps=1,
        max_completion_length=6,
        learning_rate=1e-3,
        lora={"enabled": False},
        # a short dialogue: the tiny model's every reply is 128 tokens of noise (invalid)
        evaluation={"limit": 1, "base": False, "env_options": {"feedback": "prosody", "max_turns": 3}},
        wandb_project=None,
        progress=False,
    )
    assert result["rows"] == 2
    (step,) = seen  # one step: both pairs, K/2 completions of each side per group
    for group in (step[:4], step[4:]):
        pair_id = group[0].rsplit("/", 1)[0]
        assert group == [f"{pair_id}/resolved"] * 2 + [f"{pair_id}/unresolved"] * 2
    rows = _curve(out)
    train = next(r for r in rows if r["kind"] == "train" and "reward" in r)
    assert {"reward/resolved", "reward/unresolved", "reward/hear2act_assent"} <= set(train)
    assert [r["checkpoint"] for r in rows if r["kind"] == "eval"] == ["final"]
    (played,) = [json.loads(line) for line in (out / "evals/final/results.jsonl").read_text().splitlines()]
    assert (played["agent"], played["access"]) == ("audio_llm", "A+T")
    assert played["feedback"] == "prosody" and played["counts"]["turns"] == 3


def test_cli_takes_audio_assent_and_refuses_what_does_not_apply(tiny_audio, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from hear_gym.cli import train_llm
    from hear_gym.cli.app import app

    calls = []

    def trainer(name):
        def record(**settings):
            calls.append((name, settings))
            return {"model": "final", "metrics": {}}

        return record

    monkeypatch.setattr(train_llm, "component", trainer)
    runner = CliRunner()
    command = [
        "train",
        "grpo",
        "--audio",
        "--task",
        "hear2act_assent",
        "--paired",
        "--out",
        str(tmp_path / "g"),
    ]
    command += ["--model", str(tiny_audio), "--option", "reward=tiered", "--option", "turn_cost=0.02"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    ((name, settings),) = calls
    assert name == "train_audio_grpo"
    assert settings["task"] == "hear2act_assent"
    assert settings["env_options"] == {"reward": "tiered", "turn_cost": 0.02}
    resolved = AudioGRPOSettings(**settings)
    assert resolved.evaluation.access == "A+T"
    assert resolved.evaluation.env_options == {"feedback": "prosody", "reward": "tiered", "turn_cost": 0.02}
    for flags in (["--state-probe", str(tmp_path / "p")], ["--vllm-mode", "colocate"], ["--eval-every", "2"]):
        refused = runner.invoke(app, [*command, *flags])
        assert refused.exit_code == 2 and "--audio trains under A+T" in refused.output
    with pytest.raises(ValueError, match="env_options are for the hear2act_assent task"):
        AudioGRPOSettings(out=tmp_path / "v", model=str(tiny_audio), env_options={"turn_cost": 0.02})
    with pytest.raises(ValueError, match="families choose VoiceGate items"):
        AudioGRPOSettings(
            out=tmp_path / "h", model=str(tiny_audio), task="hear2act_assent", families=("self_talk",)
        )
