"""Audio-language checkpoints of the real architectures, with the processors and chat templates
the hub ships (``tests/real_models``: Qwen2-Audio-Instruct, a whole Qwen2.5-Omni), through what
hear_gym does with them: rows from a datasets table render one audio placeholder per clip; an
agent's audio parts carry their clips; an Omni checkpoint loads its thinker alone and generates
no more than asked; SFT and paired GRPO train, save and play through the runner; a LoRA adapter
round-trips; a bfloat16 load runs on the CPU."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from datasets import Dataset
from reward_spies import vary_rewards

from agents.llm.clients import TransformersAudioChatClient
from agents.llm.loading import load_audio_model, load_processor
from agents.llm.parts import template_messages
from agents.voicegate.audio_rows import audio_sft_rows
from agents.voicegate.grpo_items import EnvReward
from agents.voicegate.llm import AudioLLMGateAgent, audio_gate_messages
from training.llm.audio_grpo import train_audio_grpo
from training.llm.audio_sft import AudioSFTCollator, train_audio_sft

COMMAND = "ss-send_message-00"
SIDES = [f"{COMMAND}/same_speaker", f"{COMMAND}/switch", f"{COMMAND}/text_only"]
AUDIO_MODELS = ["audio", "omni"]


def _count(ids: torch.Tensor, token_id: int) -> int:
    return int((ids == token_id).sum())


@pytest.mark.parametrize("name", AUDIO_MODELS)
def test_rows_from_a_table_render_one_placeholder_per_clip(real_models, name):
    """A datasets table gives every part every key (a text part gets ``audio: None``); the hub's
    templates test ``'audio' in part``, so each part must reach the template with its own keys."""
    processor = load_processor(str(real_models(name)))
    rows, clips = audio_sft_rows(SIDES)
    table = Dataset.from_list(rows)
    assert table[0]["prompt"][0]["content"][0] == {
        "type": "text",
        "text": rows[0]["prompt"][0]["content"][0]["text"],
        "audio": None,
    }
    batch = AudioSFTCollator(processor, clips)(list(table))
    tokenizer = processor.tokenizer
    bos, audio = (tokenizer.convert_tokens_to_ids(t) for t in ("<|audio_bos|>", "<|AUDIO|>"))
    assert [_count(ids, bos) for ids in batch["input_ids"]] == [1, 1, 0]  # one clip, one clip, none
    for ids, side in zip(batch["input_ids"], SIDES[:2], strict=False):  # each expanded to its clip's frames
        frames = 1 + len(clips[side]) // 160
        assert _count(ids, audio) == (((frames - 1) // 2 + 1) - 2) // 2 + 1
    assert batch["input_features"].shape[:2] == (2, 128)  # the real extractor: 128 mel bins


@pytest.mark.parametrize("name", AUDIO_MODELS)
def test_the_audio_agent_is_heard_through_the_hub_template(real_models, name):
    """The agent's audio part carries its clip, so the hub's template renders its placeholder
    (Qwen2-Audio's renders none for a bare ``{"type": "audio"}``) and the model hears it."""
    client = TransformersAudioChatClient(str(real_models(name)), max_new_tokens=3, device="cpu")
    env = gym.make("hear_gym/VoiceGate-v0", actions="text", access="A+T", conditions=["switch", "text_only"])
    observations = [env.reset(seed=s)[0] for s in (0, 1, 2)]
    with_audio = [o for o in observations if o["audio_length"][0] > 0]
    assert with_audio and len(with_audio) < len(observations)  # both kinds of input
    for obs in observations:
        text = client.processor.apply_chat_template(
            template_messages(audio_gate_messages(obs)), tokenize=False, add_generation_prompt=True
        )
        assert text.count("<|audio_bos|><|AUDIO|><|audio_eos|>") == int(obs["audio_length"][0] > 0)
    first, second = AudioLLMGateAgent(client).act_batch([observations[0], observations[0]])
    assert first == second  # greedy


def test_an_omni_checkpoint_loads_its_thinker_alone_and_generates_no_more_than_asked(real_models):
    """Qwen2.5-Omni's hub config names ``Qwen2_5OmniModel`` (no transformers 5 class); the whole
    model would load the talker and token2wav and return (text, audio) from ``generate``,
    ignoring ``max_new_tokens`` for the thinker's own 1024."""
    from transformers import Qwen2_5OmniForConditionalGeneration

    omni = str(real_models("omni"))
    thinker = load_audio_model(omni)
    assert type(thinker).__name__ == "Qwen2_5OmniThinkerForConditionalGeneration"
    whole = Qwen2_5OmniForConditionalGeneration.from_pretrained(omni, dtype=torch.float32)
    expected = whole.thinker.state_dict()
    loaded = thinker.state_dict()
    assert set(loaded) == set(expected) and all(torch.equal(loaded[k], expected[k]) for k in expected)
    assert sum(p.numel() for p in thinker.parameters()) < sum(p.numel() for p in whole.parameters())
    client = TransformersAudioChatClient(omni, max_new_tokens=3, device="cpu")
    env = gym.make("hear_gym/VoiceGate-v0", actions="text", access="A+T", conditions=["switch"])
    obs, _ = env.reset(seed=0)
    chat = audio_gate_messages(obs)
    text = client.processor.apply_chat_template(
        template_messages(chat), tokenize=False, add_generation_prompt=True
    )
    inputs = client.processor(
        text=[text], audio=[obs["audio"][: obs["audio_length"][0]]], return_tensors="pt"
    )
    new = client._generate(inputs)
    assert isinstance(new, torch.Tensor) and new.shape == (1, 3)  # text ids only, as many as asked
    assert isinstance(client.complete([chat])[0], str)


def _curve(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", ["audio", pytest.param("omni", marks=pytest.mark.slow)])
def test_audio_sft_trains_a_lora_on_the_language_model_that_round_trips(real_models, tmp_path, name):
    model = str(real_models(name))
    result = train_audio_sft(
        out=tmp_path / "sft",
        model=model,
        families=("speaker_switch",),
        demo_limit=2,
        max_steps=1,
        batch_size=2,
        learning_rate=1e-2,
        evaluation={"limit": 2, "families": ("speaker_switch",), "batch_size": 2, "base": False},
        wandb_project=None,
        progress=False,
    )
    final = Path(result["model"])
    from safetensors import safe_open

    with safe_open(final / "adapter_model.safetensors", "pt") as f:
        names = list(f.keys())
    assert names and all(".language_model." in n for n in names)  # never the audio encoder
    merged = load_audio_model(str(final))  # base + adapter, merged
    base = load_audio_model(model)
    changed = [k for k, v in merged.state_dict().items() if not torch.equal(v, base.state_dict()[k])]
    assert changed and all(
        ".language_model." in k and k.split(".")[-2] in ("q_proj", "k_proj", "v_proj", "o_proj")
        for k in changed
    )
    assert (final / "chat_template.jinja").is_file() or (final / "processor_config.json").is_file()
    played = (tmp_path / "sft/evals/final/results.jsonl").read_text().splitlines()
    assert len(played) == 2 and json.loads(played[0])["cell"] == "audio_llm@A+T"


GRPO_RUNS = [
    ("omni", True),
    pytest.param("omni", False, marks=pytest.mark.slow),
    pytest.param("audio", True, marks=pytest.mark.slow),
    pytest.param("audio", False, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name,paired", GRPO_RUNS)
def test_audio_grpo_trains_the_model_and_plays_it(real_models, tmp_path, monkeypatch, name, paired):
    vary_rewards(monkeypatch, EnvReward)  # a completion-dependent term: no group is dropped
    result = train_audio_grpo(
        out=tmp_path / "grpo",
        model=str(real_models(name)),
        paired=paired,
        families=("speaker_switch",),
        item_limit=1,
        num_generations=4,
        batch_size=4,
        max_steps=1,
        max_completion_length=4,
        learning_rate=1e-3,
        lora={"enabled": False},
        evaluation={"limit": 2, "families": ("speaker_switch",), "base": False, "batch_size": 2},
        wandb_project=None,
        progress=False,
    )
    final = Path(result["model"])
    config = json.loads((final / "config.json").read_text())
    trained = {
        "omni": "Qwen2_5OmniThinkerForConditionalGeneration",
        "audio": "Qwen2AudioForConditionalGeneration",
    }
    assert config["architectures"] == [trained[name]]  # an Omni checkpoint trains its thinker
    train = next(r for r in _curve(tmp_path / "grpo") if r["kind"] == "train" and "reward" in r)
    assert train["grad_norm"] > 0 and train.get("paired/dropped_group_fraction", 0.0) == 0.0
    assert len((tmp_path / "grpo/evals/final/results.jsonl").read_text().splitlines()) == 2
    assert TransformersAudioChatClient(str(final), max_new_tokens=2, device="cpu").complete(
        [[{"role": "user", "content": "hello"}]]
    )


def test_a_bfloat16_audio_model_runs_on_the_cpu(real_models):
    client = TransformersAudioChatClient(
        str(real_models("audio")), max_new_tokens=2, device="cpu", dtype="bf16"
    )
    assert client.model.dtype == torch.bfloat16
    env = gym.make("hear_gym/VoiceGate-v0", actions="text", access="A+T", conditions=["switch"])
    (reply,) = AudioLLMGateAgent(client).act_batch([env.reset(seed=0)[0]])
    assert isinstance(reply, str)
