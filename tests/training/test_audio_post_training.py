"""Audio post-training on VoiceGate under A+T: rows whose pair sides differ only in the waveform,
SFT labels, each side's audio reaching the forward passes of paired GRPO, end-to-end runs that
save safetensors and play through the runner, and same-seed GRPO curves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from reward_spies import vary_rewards
from transformers import AutoProcessor
from transformers.models.qwen2_audio import modeling_qwen2_audio

from agents.audio_material import audio_keys
from agents.voicegate.audio_rows import audio_grpo_rows, audio_sft_rows
from agents.voicegate.grpo_items import EnvReward, item_pairs
from training.llm.audio_grpo import AudioGRPOSettings, train_audio_grpo
from training.llm.audio_sft import AudioSFTCollator, AudioSFTSettings, train_audio_sft
from training.llm.paired_grpo import minus_side
from training.tiny_model import build_tiny_audio_lm

COMMAND = "ss-send_message-00"


@pytest.fixture(scope="module")
def tiny_audio(tmp_path_factory) -> Path:
    return build_tiny_audio_lm(tmp_path_factory.mktemp("models") / "tiny_audio")


def _texts(prompt):
    return [[p["text"] for p in m["content"] if p["type"] == "text"] for m in prompt]


def _placeholders(processor, clip) -> int:
    audio_id = processor.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    return processor(text=["<|AUDIO|>"], audio=[clip], sampling_rate=16_000)["input_ids"][0].count(audio_id)


def _curve(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]


def test_pair_sides_have_the_same_words_and_their_own_audio():
    pairs = item_pairs("train", ("speaker_switch", "self_talk"), paired=True)
    assert all(plus.endswith("/same_speaker") and minus.endswith("/switch") for plus, minus in pairs[:320])
    assert not any("/text_only" in i for pair in pairs for i in pair)
    (row,), clips = audio_grpo_rows([(f"{COMMAND}/same_speaker", f"{COMMAND}/switch")])
    assert _texts(row["prompt"]) == _texts(row["prompt_minus"])  # identical instruction and words
    assert audio_keys(row["prompt"]) == [row["item_id"]]
    assert audio_keys(minus_side(row)["prompt"]) == [row["item_id_minus"]]  # the swap carries the audio
    plus, minus = clips[row["item_id"]], clips[row["item_id_minus"]]
    assert plus.dtype == minus.dtype and (len(plus) != len(minus) or not (plus == minus).all())
    (text_only,), no_clips = audio_sft_rows([f"{COMMAND}/text_only"])
    assert audio_keys(text_only["prompt"]) == [] and no_clips == {}


def test_sft_labels_are_the_reply_and_eos_never_the_audio(tiny_audio):
    processor = AutoProcessor.from_pretrained(tiny_audio)
    tokenizer = processor.tokenizer
    ids = [f"{COMMAND}/same_speaker", f"{COMMAND}/switch", f"{COMMAND}/text_only"]
    rows, clips = audio_sft_rows(ids)
    batch = AudioSFTCollator(processor, clips)(rows)
    audio_id = tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    assert batch["input_features"].shape[0] == 2  # the text-only row has no clip
    for row, ids_, labels, mask in zip(
        rows, batch["input_ids"], batch["labels"], batch["attention_mask"], strict=True
    ):
        learned = ids_[labels != -100]
        assert tokenizer.decode(learned) == row["completion"] + "<|endoftext|>"
        assert (labels[mask == 0] == -100).all() and audio_id not in learned.tolist()
        # the labelled tokens are the last real ones: the reply follows the whole prompt
        assert mask[labels != -100].all() and (labels != -100).nonzero().max() == mask.sum() - 1
    assert rows[1]["completion"] == "[Mute]" and rows[0]["completion"].startswith("<|TOOL|>")
    # each clip expands to as many placeholders as it gives features (same words, other audio)
    counts = (batch["input_ids"] == audio_id).sum(-1).tolist()
    assert counts == [_placeholders(processor, clips[ids[0]]), _placeholders(processor, clips[ids[1]]), 0]
    assert batch["feature_attention_mask"].sum(-1).tolist() == [
        1 + len(clips[i]) // 160 for i in ids[:2]
    ]  # 10 ms hops
    # the prompt is exactly the template's rendering of the agent's chat
    text = processor.apply_chat_template(
        [
            {**m, "content": [{"type": p["type"], "text": p["text"]} for p in m["content"]]}
            for m in rows[2]["prompt"]
        ]
        + [{"role": "assistant", "content": rows[2]["completion"]}],
        tokenize=False,
    )
    real = batch["input_ids"][2][batch["attention_mask"][2] == 1]
    assert text.startswith(tokenizer.decode(real))


def test_audio_sft_trains_language_model_lora_and_eval_plays_it(tiny_audio, tmp_path):
    result = train_audio_sft(
        out=tmp_path / "sft",
        model=str(tiny_audio),
        families=("speaker_switch",),
        demo_limit=4,
        max_steps=2,
        batch_size=2,
        learning_rate=1e-3,
        evaluation={"limit": 2, "families": ("speaker_switch",), "batch_size": 2},
        wandb_project=None,
        progress=False,
    )
    final = Path(result["model"])
    config = json.loads((final / "adapter_config.json").read_text())
    assert config["r"] == 32 and config["lora_alpha"] == 64
    from safetensors import safe_open

    with safe_open(final / "adapter_model.safetensors", "pt") as f:
        names = list(f.keys())
    assert names and all(".language_model." in n for n in names)  # the audio encoder stays frozen
    assert {n.split(".")[-3] for n in names} == {"q_proj", "k_proj", "v_proj", "o_proj"}
    assert (final / "processor_config.json").exists()
    rows = _curve(tmp_path / "sft")
    assert [r["step"] for r in rows if r["kind"] == "train" and "loss" in r] == [1, 2]
    evals = {r["checkpoint"]: r for r in rows if r["kind"] == "eval"}
    assert set(evals) == {"base", "final"} and "switch_mute" in evals["final"]["metrics"]
    results = [
        json.loads(line) for line in (tmp_path / "sft/evals/final/results.jsonl").read_text().splitlines()
    ]
    assert len(results) == 2 and {r["cell"] for r in results} == {"audio_llm@A+T"}


def _grpo(tiny_audio, out: Path, **overrides):
    settings = {
        "out": out,
        "model": str(tiny_audio),
        "families": ("speaker_switch",),
        "item_limit": 1,
        "num_generations": 4,
        "batch_size": 4,
        "max_steps": 1,
        "max_completion_length": 6,
        "learning_rate": 1e-3,
        "lora": {"enabled": False},
        "evaluation": {"limit": 2, "families": ("speaker_switch",), "base": False, "batch_size": 2},
        "wandb_project": None,
        "progress": False,
    }
    return train_audio_grpo(**{**settings, **overrides})


@pytest.fixture
def varied_reward(monkeypatch):
    """The env's reward plus a small completion-dependent term, so that groups are not dropped."""
    return vary_rewards(monkeypatch, EnvReward)


def test_each_side_of_a_pair_hears_its_own_clip_in_every_forward(
    tiny_audio, tmp_path, monkeypatch, varied_reward
):
    calls = []  # (input_ids, input_features, feature_attention_mask) of every prompt-sized forward
    original = modeling_qwen2_audio.Qwen2AudioModel.forward

    def spy(
        self, input_ids=None, input_features=None, attention_mask=None, feature_attention_mask=None, **kw
    ):
        if input_ids is not None and input_ids.shape[1] > 1:
            calls.append((input_ids, input_features, feature_attention_mask))
        return original(self, input_ids, input_features, attention_mask, feature_attention_mask, **kw)

    monkeypatch.setattr(modeling_qwen2_audio.Qwen2AudioModel, "forward", spy)
    result = _grpo(tiny_audio, tmp_path / "paired")
    ((plus, minus),) = item_pairs("train", ("speaker_switch",), paired=True, limit=1)
    assert varied_reward[0] == [plus, plus, minus, minus]  # one group: K/2 of each side

    processor = AutoProcessor.from_pretrained(tiny_audio)
    _, clips = audio_grpo_rows([(plus, minus)])
    reference = {
        k: processor.feature_extractor(clips[k], sampling_rate=16_000, return_tensors="pt") for k in clips
    }

    def sides(features):
        return [
            next(k for k, ref in reference.items() if torch.equal(row, ref["input_features"][0]))
            for row in features
        ]

    audio_id = processor.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    generation, loss, evaluation = calls  # the step's generation and loss, then the final's evaluation
    assert generation[0].shape[0] == loss[0].shape[0] == 4 and evaluation[0].shape[0] == 2
    assert sides(generation[1]) == [plus, plus, minus, minus]  # generation hears each row's own clip
    assert sorted(sides(loss[1])) == sorted([plus, plus, minus, minus])  # rows shuffled, audio with them
    # each row's placeholders are as many as its own clip's features (the two clips' differ)
    counts = {side: _placeholders(processor, clip) for side, clip in clips.items()}
    assert counts[plus] != counts[minus]
    for input_ids, features, _ in (generation, loss):
        assert [(row == audio_id).sum().item() for row in input_ids] == [counts[s] for s in sides(features)]

    assert (Path(result["model"]) / "model.safetensors").exists()
    rows = _curve(tmp_path / "paired")
    train = next(r for r in rows if r["kind"] == "train" and "reward" in r)
    assert train["paired/dropped_group_fraction"] == 0.0 and train["grad_norm"] > 0
    evals = [r for r in rows if r["kind"] == "eval"]
    assert [e["checkpoint"] for e in evals] == ["final"]
    assert len((tmp_path / "paired/evals/final/results.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_same_seed_gives_the_same_audio_grpo_curve(tiny_audio, tmp_path, varied_reward):
    def curve(out):
        _grpo(tiny_audio, out, evaluation={"limit": 1, "base": False, "families": ("self_talk",)})
        keep = ("loss", "reward", "completions/mean_length", "grad_norm")
        return [{k: r.get(k) for k in keep} for r in _curve(out) if r["kind"] == "train"]

    first = curve(tmp_path / "a")
    assert first[0]["grad_norm"] > 0 and first == curve(tmp_path / "b")


def test_audio_settings_refuse_what_does_not_work(tiny_audio, tmp_path):
    base = {"out": tmp_path / "r", "model": str(tiny_audio)}
    with pytest.raises(TypeError, match="vllm_mode"):
        AudioGRPOSettings(**base, vllm_mode="colocate")  # no audio path in vLLM here
    with pytest.raises(ValueError, match="include 'speaker_switch'"):
        AudioGRPOSettings(**base, families=("self_talk",))
    with pytest.raises(ValueError, match="even for paired"):
        AudioGRPOSettings(**base, num_generations=3, batch_size=6)
    with pytest.raises(ValueError, match="evaluated under A or A\\+T"):
        AudioSFTSettings(**base, evaluation={"access": "T"})
    with pytest.raises(ValueError, match="families must be"):
        AudioSFTSettings(**base, families=("cue_validity",))
    assert AudioGRPOSettings(**base).paired and AudioGRPOSettings(**base).evaluation.access == "A+T"


def test_cli_trains_the_audio_model_and_refuses_text_only_options(tiny_audio, tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    runner = CliRunner()
    out = tmp_path / "audio_sft"
    tiny = ["--demo-limit", "2", "--max-steps", "1", "--batch-size", "2", "--eval-limit", "2"]
    result = runner.invoke(
        app,
        ["train", "sft", "--audio", "--out", str(out), "--model", str(tiny_audio), *tiny]
        + ["--no-eval-base", "--no-wandb", "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    played = (out / "evals" / "final" / "results.jsonl").read_text().splitlines()
    assert len(played) == 2 and json.loads(played[0])["cell"] == "audio_llm@A+T"
    refused = runner.invoke(
        app,
        ["train", "sft", "--audio", "--env", "hear_gym/Hear2Act-v0", "--out", str(tmp_path / "s")]
        + ["--model", str(tiny_audio)],
    )
    assert refused.exit_code == 2
    assert "audio SFT demonstrations exist for ['hear_gym/VoiceGate-v0'], not 'hear_gym/Hear2Act-v0'" in (
        " ".join(refused.output.split())
    )
    no_eval_every = runner.invoke(
        app,
        ["train", "sft", "--audio", "--eval-every", "2", "--out", str(tmp_path / "e")]
        + ["--model", str(tiny_audio)],
    )
    assert no_eval_every.exit_code == 2 and "--audio trains under A+T" in no_eval_every.output
