"""GRPO on VoiceGate: the env reward, paired-group advantages (VoxGate Eq. 1), pairing of the
two sides inside one group, refusals, and same-seed runs."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import torch
from reward_spies import record_reward_calls

from agents.voicegate.grpo_items import EnvReward, gate_rows, item_pairs
from training.llm.grpo import GRPOSettings, train_grpo
from training.llm.paired_grpo import paired_advantages
from training.tiny_model import build_tiny_causal_lm

EOS = 0
# A paired run on two Hear2Act assent pairs, evaluated on one held-out dialogue.
ASSENT_RUN = dict(
    task="hear2act_assent",
    paired=True,
    item_limit=2,
    num_generations=2,
    batch_size=4,
    env_options={"reward": "tiered", "turn_cost": 0.02},
    evaluation={"limit": 1, "base": False, "batch_size": 1},
)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


def test_paired_advantages_match_a_hand_computation():
    rewards = torch.tensor([1.0, 1.0, -1.0, -1.0, 0.5, 0.5, 0.5, 0.5, 1.0, -1.2, -1.0, -1.0])
    advantages, kept = paired_advantages(rewards, 4)
    # group 1: mean 0, sample std sqrt(4/3)
    s1 = math.sqrt(4 / 3)
    # group 3: mean -0.55, deviations 1.55, -0.65, -0.45, -0.45
    d3 = [1.55, -0.65, -0.45, -0.45]
    s3 = math.sqrt(sum(d * d for d in d3) / 3)
    expected = [1 / s1, 1 / s1, -1 / s1, -1 / s1, 0, 0, 0, 0, *[d / s3 for d in d3]]
    expected = [e * s / (s + 1e-4) for e, s in zip(expected, [s1] * 4 + [1] * 4 + [s3] * 4, strict=True)]
    assert advantages.tolist() == pytest.approx(expected, abs=1e-6)
    assert kept.tolist() == [True] * 4 + [False] * 4 + [True] * 4  # zero variance: dropped


def test_paired_advantages_refuse_odd_or_ragged_groups():
    with pytest.raises(ValueError, match="even size"):
        paired_advantages(torch.zeros(6), 3)
    with pytest.raises(ValueError, match="do not form groups"):
        paired_advantages(torch.zeros(6), 4)


def test_paired_rows_join_each_command_with_its_switch():
    rows = gate_rows(("speaker_switch", "self_talk"), paired=True)
    pairs = [r for r in rows if r["item_family"] == "speaker_switch"]
    assert len(pairs) == 320  # one per train command; text-only inputs are not paired
    for row in pairs:
        assert row["item_id"].endswith("/same_speaker") and row["item_id_minus"].endswith("/switch")
        assert row["item_id"].split("/")[0] == row["item_id_minus"].split("/")[0]
        assert row["prompt"] == row["prompt_minus"]  # same words: only a listener can tell them apart
    for row in rows:
        if row["item_family"] == "self_talk":
            assert row["item_id_minus"] == row["item_id"]


def _targets(rows, side_columns):
    """Each item a run's groups hold (paired: both sides of a pair), as (item id, mutes)."""
    sides = [side for row in rows for side in dict.fromkeys(row[column] for column in side_columns)]
    return sorted((side, side.endswith("/switch")) for side in sides)


@pytest.mark.parametrize("families", [("speaker_switch",), ("speaker_switch", "self_talk")])
def test_a_plain_run_sees_the_paired_runs_items_and_target_mix(families):
    """The plain control is the paired items as ordinary groups: the same items (no text-only
    input), each side its own row, so the share of mute targets is the same in both."""
    paired = gate_rows(families, paired=True)
    plain = gate_rows(families)
    assert all(r["item_id"] == r["item_id_minus"] for r in plain)
    assert _targets(plain, ("item_id",)) == _targets(paired, ("item_id", "item_id_minus"))
    assert not any("/text_only" in r["item_id"] for r in plain)
    mutes = [mute for _, mute in _targets(plain, ("item_id",)) if families == ("speaker_switch",)]
    assert not mutes or sum(mutes) / len(mutes) == 0.5


def test_item_limit_takes_the_same_pairs_in_both_modes():
    paired = gate_rows(("speaker_switch",), paired=True, limit=3)
    plain = gate_rows(("speaker_switch",), limit=3)
    assert len(paired) == 3 and len(plain) == 6
    assert _targets(plain, ("item_id",)) == _targets(paired, ("item_id", "item_id_minus"))


@pytest.mark.parametrize("paired", [False, True])
def test_text_commands_add_each_commands_text_only_input_as_an_ordinary_item(paired):
    """The ``voicegate_text_commands`` task's rows: the families' items as before, plus the 320
    train commands' text-only inputs (tool targets a text model can read), each its own group."""
    for families in [("side_talk",), ("speaker_switch", "self_talk")]:
        before = item_pairs("train", families, paired)
        after = item_pairs("train", families, paired, text_commands=True)
        added = [unit for unit in after if unit not in before]
        assert sorted(before) == sorted(unit for unit in after if unit in before)
        assert len(added) == 320
        assert all(plus == minus and plus.endswith("/text_only") for plus, minus in added)


def test_env_reward_is_the_env_reward_and_cut_replies_are_malformed():
    ids = ["ss-send_message-00/same_speaker", "ss-send_message-00/switch"]
    reward = EnvReward(ids, {EOS})
    tool = '<|TOOL|>{"name": "send_message", "params": {}}</|TOOL|>'
    metrics = {}
    rewards = reward(
        completions=[[{"role": "assistant", "content": r}] for r in (tool, tool, "[Mute]", tool)],
        completion_ids=[[5, EOS], [5, EOS], [5, EOS], [5, 6]],  # the last one was cut by the cap
        item_id=[ids[0], ids[1], ids[1], ids[0]],
        item_family=["speaker_switch"] * 4,
        log_metric=metrics.__setitem__,
    )
    assert rewards == [1.0, -1.0, 1.0, -1.0]  # a cut reply is the empty reply: a wrong action (paper reward)
    assert metrics == {"valid_format": 0.75, "reward/speaker_switch": pytest.approx(0.0)}


def test_grpo_settings_refuse_what_breaks_pairing(tiny_lm, tmp_path):
    base = {"out": tmp_path / "r", "model": str(tiny_lm)}
    with pytest.raises(ValueError, match="even for paired"):
        GRPOSettings(**base, paired=True, num_generations=3, batch_size=6)
    with pytest.raises(ValueError, match="server mode"):
        GRPOSettings(**base, paired=True, vllm_mode="server")
    with pytest.raises(ValueError, match="must be a multiple of num_generations"):
        GRPOSettings(**base, num_generations=4, batch_size=6)
    with pytest.raises(ValueError, match="include 'speaker_switch'"):
        GRPOSettings(**base, paired=True, families=("self_talk",))
    with pytest.raises(ValueError, match="families must be"):
        GRPOSettings(**base, families=("cue_validity",))
    with pytest.raises(ValueError, match="top_entropy_quantile"):
        GRPOSettings(**base, top_entropy_quantile=0.0)


def _tiny_run(tiny_lm, out: Path, **overrides):
    settings = {
        "out": out,
        "model": str(tiny_lm),
        "item_limit": 4,
        "num_generations": 4,
        "batch_size": 8,
        "max_steps": 1,
        "max_completion_length": 12,
        "learning_rate": 1e-3,
        "lora": {"enabled": False},
        "evaluation": {"limit": 2, "families": ("speaker_switch",), "base": False, "batch_size": 2},
        "wandb_project": None,
        "progress": False,
    }
    return train_grpo(**{**settings, **overrides})


def test_paired_grpo_puts_both_sides_of_a_pair_in_one_group(tiny_lm, tmp_path, monkeypatch):
    seen = record_reward_calls(monkeypatch, EnvReward)
    result = _tiny_run(tiny_lm, tmp_path / "paired", paired=True, families=("speaker_switch",))
    groups = [seen[0][i : i + 4] for i in range(0, 8, 4)]
    for group in groups:
        command = group[0].split("/")[0]
        assert group == [f"{command}/same_speaker"] * 2 + [f"{command}/switch"] * 2
    rows = [json.loads(line) for line in (tmp_path / "paired" / "curve.jsonl").read_text().splitlines()]
    train = [r for r in rows if r["kind"] == "train" and "reward" in r]
    assert "paired/dropped_group_fraction" in train[0] and "reward/speaker_switch" in train[0]
    assert 0.0 <= result["env_share"] < 1.0
    assert (Path(result["model"]) / "model.safetensors").exists()


def test_same_seed_gives_the_same_grpo_curve(tiny_lm, tmp_path):
    def curve(out):
        _tiny_run(tiny_lm, out, evaluation={"limit": 1, "base": False, "families": ("self_talk",)})
        rows = [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]
        keep = ("loss", "reward", "completions/mean_length", "grad_norm")
        return [{k: r.get(k) for k in keep} for r in rows if r["kind"] == "train"]

    assert curve(tmp_path / "a") == curve(tmp_path / "b")


@pytest.fixture(scope="module")
def concern_probe(tmp_path_factory) -> Path:
    """A concern probe trained on the rendered turns of one training scenario, saved."""
    from agents.hear2act.audio_probe import ProbeConfig, build_data, fit
    from hear_gym.speech.cache import RenderCache
    from hear_gym.speech.renderers import make_renderer

    config = ProbeConfig(max_scenarios=1, epochs=40)
    probe = fit(config, build_data(config, "train", RenderCache(make_renderer("espeak")), seed=0))
    path = tmp_path_factory.mktemp("probe") / "concern.safetensors"
    probe.save(path)
    return path


@pytest.mark.slow
def test_assent_pairs_through_the_inferred_state_train_and_evaluate_under_t_s_hat(
    tiny_lm, concern_probe, tmp_path, monkeypatch
):
    """With a concern probe the pairs reach the model through T+S^ (the probe's sentence, one per
    side's audio) and the held-out evaluation plays T+S^ with the same probe, recorded."""
    from agents.hear2act.assent_pairs import AssentReward
    from agents.hear2act.audio_probe import ConcernInferrer

    prompts: list[str] = []
    original = AssentReward.__call__

    def spy(self, **kwargs):
        prompts.extend(p[-1]["content"] for p in kwargs["prompts"])
        return original(self, **kwargs)

    monkeypatch.setattr(AssentReward, "__call__", spy)
    result = _tiny_run(
        tiny_lm,
        tmp_path / "assent_hat",
        state_probe=str(concern_probe),
        **ASSENT_RUN,
    )
    assert prompts and all("AUDIO-INFERRED STATE:" in p for p in prompts)
    assert all(p.rsplit("\n", 1)[1] in ConcernInferrer.SENTENCES.values() for p in prompts)
    final = tmp_path / "assent_hat" / "evals" / "final"
    (played,) = (final / "results.jsonl").read_text().splitlines()
    assert json.loads(played)["access"] == "T+S^"
    plugins = dict(map(tuple, json.loads((final / "metadata.json").read_text())["config"]["plugins"]))
    assert plugins["state_inferrer"].startswith("concern.safetensors@sha256:")
    assert "1st%" in result["metrics"]["final"]
    saved = json.loads((tmp_path / "assent_hat" / "settings.json").read_text())["settings"]
    assert saved["env_options"]["renderer"] == "espeak" and saved["state_probe"] == str(concern_probe)


def test_state_probe_settings_are_checked(tiny_lm, concern_probe, tmp_path):
    base = {"out": tmp_path / "x", "model": str(tiny_lm)}
    with pytest.raises(ValueError, match="are for the hear2act_assent task"):
        GRPOSettings(**base, state_probe=str(concern_probe))
    with pytest.raises(ValueError, match="no probe checkpoint"):
        GRPOSettings(**base, task="hear2act_assent", state_probe=str(tmp_path / "missing.safetensors"))
    with pytest.raises(ValueError, match="was trained on"):
        GRPOSettings(
            **base, task="hear2act_assent", state_probe=str(concern_probe), env_options={"renderer": "praat"}
        )
    with pytest.raises(ValueError, match="T\\+S\\^ evaluations need state_probe"):
        GRPOSettings(**base, task="hear2act_assent", evaluation={"access": "T+S^"})


def test_the_documented_accelerate_config_parses():
    from accelerate.commands.config.config_args import ClusterConfig
    from accelerate.utils import DistributedType

    path = Path(__file__).parents[2] / "training" / "configs" / "accelerate_multi_gpu.yaml"
    config = ClusterConfig.from_yaml_file(str(path))
    assert config.distributed_type is DistributedType.MULTI_GPU
    assert config.num_processes == 8 and config.mixed_precision == "bf16" and not config.use_cpu


@pytest.mark.slow
def test_paired_grpo_trains_on_hear2act_assent_pairs(tiny_lm, tmp_path):
    """The second task: one transcript at an assent turn, genuine (x+) vs reluctant (x-), each
    group [x+, x-]; the trained model then plays whole held-out dialogues under T+S."""
    result = _tiny_run(
        tiny_lm,
        tmp_path / "assent",
        **ASSENT_RUN,
    )
    rows = [json.loads(line) for line in (tmp_path / "assent" / "curve.jsonl").read_text().splitlines()]
    train = next(r for r in rows if r["kind"] == "train" and "reward" in r)
    assert "reward/resolved" in train and "reward/unresolved" in train
    assert "paired/dropped_group_fraction" in train
    assert "1st%" in result["metrics"]["final"]
    played = (tmp_path / "assent" / "evals" / "final" / "results.jsonl").read_text().splitlines()
    assert len(played) == 1 and json.loads(played[0])["access"] == "T+S"
    with pytest.raises(ValueError, match="state_probe are for the hear2act_assent task"):
        GRPOSettings(out=tmp_path / "x", model=str(tiny_lm), env_options={"reward": "tiered"})
    with pytest.raises(ValueError, match="task must be one of"):
        GRPOSettings(out=tmp_path / "x", model=str(tiny_lm), task="onset")


@pytest.mark.slow
def test_a_group_split_over_two_processes_keeps_its_pair(tiny_lm, tmp_path):
    """torchrun, 2 CPU processes (gloo), 2 completions each and K=4: process 0 holds the x+ half
    of every group and process 1 the x- half of the same command (sides by global row)."""
    import subprocess
    import sys

    script = Path(__file__).with_name("two_process_paired.py")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2"]
    done = subprocess.run(
        [*torchrun, str(script), str(tmp_path / "run"), str(tiny_lm)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "WANDB_MODE": "disabled"},
    )
    assert done.returncode == 0, done.stderr[-6000:]
    seen = [
        [json.loads(line) for line in (tmp_path / f"seen_{rank}.jsonl").read_text().splitlines()]
        for rank in (0, 1)
    ]
    assert len(seen[0]) == len(seen[1]) == 2  # two steps
    for plus, minus in zip(*seen, strict=True):
        command = plus[0].split("/")[0]
        assert plus == [f"{command}/same_speaker"] * 2 and minus == [f"{command}/switch"] * 2
    # One process writes the run: one log row per step, one evaluation.
    rows = [json.loads(line) for line in (tmp_path / "run" / "curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if r["kind"] == "train" and "loss" in r] == [1, 2]
    assert [r["checkpoint"] for r in rows if r["kind"] == "eval"] == ["final"]


def test_sampled_records_draw_the_same_samples_for_the_same_seed(tiny_lm):
    """The learning tier's sampled evaluation: the same weights and seed give the same replies
    (so a GRPO run that did not learn has a lift of exactly 0), another seed other replies, and a
    reply cut by the token cap is scored as the empty reply, as GRPO's reward scores it."""
    from agents.voicegate.reply_checks import sampled_records

    items = ["st-0-22", "st-7-42"]
    first = sampled_records(tiny_lm, items, samples=3, max_completion_length=8, seed=5)
    again = sampled_records(tiny_lm, items, samples=3, max_completion_length=8, seed=5)
    other = sampled_records(tiny_lm, items, samples=3, max_completion_length=8, seed=6)
    assert [r["item_id"] for r in first] == [items[0]] * 3 + [items[1]] * 3
    assert first == again and [r["text"] for r in first] != [r["text"] for r in other]
    cut = [r for r in first if not r["ended"]]
    empty = EnvReward(items, {EOS})
    assert cut and all(r["reward"] == empty.score(r["item_id"], "")[0] for r in cut)
