"""Demonstrations, SFT (label masks, LoRA adapters, in-env evaluation) and adapter loading."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest
import torch

from agents.hear2act.demos import hear2act_demos
from agents.hear2act.llm import LLMAgent
from agents.llm.clients import ChatClientError, MockChatClient, TransformersChatClient
from agents.training_material import seeded_sample
from agents.voicegate.demos import voicegate_demos
from agents.voicegate.llm import LLMGateAgent
from hear_gym.core.registry import family
from training.llm.demos import read_jsonl, write_jsonl
from training.llm.sft import SFTSettings, make_trainer, train_sft
from training.tiny_model import build_tiny_causal_lm

VOICEGATE = "hear_gym/VoiceGate-v0"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("models") / "tiny")


def test_every_voicegate_demo_is_scored_correct_by_the_env():
    demos = voicegate_demos()
    assert len(demos) == len(family(VOICEGATE).item_ids("train"))
    env = gym.make(VOICEGATE, access="T", actions="text", item_ids=[d["item_id"] for d in demos])
    wrong = []
    for demo in demos:
        env.reset(options={"item_id": demo["item_id"]})
        _, reward, *_, info = env.step(demo["completion"][0]["content"])
        if not info["outcome"]["correct"]:
            wrong.append(demo["item_id"])
        assert reward > 0
    # (before voicegate-gen-3 one side-talk item asked the same question twice, behind an opener)
    assert wrong == []
    kinds = Counter(d["completion"][0]["content"][:6] for d in demos)
    assert kinds["[Mute]"] == 501 and kinds["<|TOOL"] == 798


def test_voicegate_demos_without_a_condition_sample_from_the_items_left():
    """``exclude_conditions`` drops those items before the seeded draw: the sample is the one a
    list without them gives, and no excluded item is in it."""
    ids = family(VOICEGATE).item_ids("train")
    kept = voicegate_demos(exclude_conditions=("switch",))
    switch = {d["item_id"] for d in voicegate_demos(families=("speaker_switch",))} - {
        d["item_id"] for d in kept
    }
    assert len(kept) + len(switch) == len(ids) and all(d["condition"] != "switch" for d in kept)
    drawn = voicegate_demos(limit=40, seed=3, exclude_conditions="switch")
    expected = seeded_sample([d["item_id"] for d in kept], 40, 3)
    assert [d["item_id"] for d in drawn] == expected
    with pytest.raises(ValueError, match="unknown"):
        voicegate_demos(exclude_conditions=("swtich",))


def test_demo_prompts_are_what_the_agents_send():
    demo = voicegate_demos(families=("self_talk",))[0]
    client = MockChatClient(lambda messages: "[Mute]")
    env = gym.make(VOICEGATE, access="T", actions="text", item_ids=[demo["item_id"]])
    observation, _ = env.reset(options={"item_id": demo["item_id"]})
    LLMGateAgent(client).act(observation)
    assert client.calls == [demo["prompt"]]


def test_hear2act_demos_replay_through_the_llm_agent():
    """An LLM agent whose client answers with the demonstrations replays the expert's dialogue:
    the same prompts, turn by turn, and the same ending."""
    demos = hear2act_demos(limit=2, feedback="prosody")
    assert {d["item_id"] for d in demos} == set(family("hear_gym/Hear2Act-v0").item_ids("train")[:2])
    replies = iter(d["completion"][0]["content"] for d in demos)
    client = MockChatClient(lambda messages: next(replies))
    agent = LLMAgent(client)
    env = gym.make("hear_gym/Hear2Act-v0", access="T+S", actions="text", split="train", feedback="prosody")
    confirmed = 0  # the state-aware expert confirms the gold option under T+S
    for k, scenario_id in enumerate(dict.fromkeys(d["item_id"] for d in demos)):
        observation, _ = env.reset(seed=k, options={"item_id": scenario_id})
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(agent.act(observation))
            done = terminated or truncated
        confirmed += info["episode"]["terminated"] and info["episode"]["success"]
    assert client.calls == [d["prompt"] for d in demos]
    assert confirmed == 2
    assert demos[-1]["completion"][0]["content"].startswith("[ACTION: CONFIRM]")


def test_demo_files_round_trip_and_refuse_damage(tmp_path):
    demos = voicegate_demos(families=("self_talk",))[:3]
    path = write_jsonl(demos, tmp_path / "demos.jsonl")
    assert read_jsonl(path) == demos
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(ValueError, match="demos.jsonl:4: not JSON"):
        read_jsonl(path)
    path.write_text(json.dumps({"prompt": []}) + "\n")
    with pytest.raises(ValueError, match="needs 'prompt' and 'completion'"):
        read_jsonl(path)


def _labels(trainer):
    batch = next(iter(trainer.get_train_dataloader()))
    return batch["input_ids"], batch["labels"], batch["attention_mask"]


def test_sft_loss_sees_only_the_reply_and_its_end_of_turn(tiny_lm, tmp_path):
    demos = voicegate_demos(families=("self_talk",))[:2]
    settings = SFTSettings(out=tmp_path / "run", model=str(tiny_lm), batch_size=2, lora={"enabled": False})
    trainer = make_trainer(settings, demos, settings.model)
    tokenizer = trainer.processing_class
    ids, labels, mask = _labels(trainer)
    for row in range(2):
        learned = ids[row][labels[row] != -100].tolist()
        assert tokenizer.decode(learned) == "[Mute]<|endoftext|>\n"
        assert tokenizer.eos_token_id in learned


def test_pad_equal_to_eos_keeps_the_real_eos_in_the_loss(tiny_lm, tmp_path):
    """With pad == eos, a collator that masks by pad id would drop the reply's real EOS."""
    from transformers import AutoTokenizer

    model_dir = tmp_path / "pad_is_eos"
    tokenizer = AutoTokenizer.from_pretrained(tiny_lm)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(model_dir)
    for f in ("config.json", "model.safetensors", "generation_config.json"):
        if (tiny_lm / f).exists():
            (model_dir / f).write_bytes((tiny_lm / f).read_bytes())
    demos = voicegate_demos(families=("self_talk",))[:1] + voicegate_demos(families=("speaker_switch",))[:1]
    settings = SFTSettings(out=tmp_path / "run", model=str(model_dir), batch_size=2, lora={"enabled": False})
    trainer = make_trainer(settings, demos, settings.model)
    assert trainer.processing_class.pad_token_id == trainer.processing_class.eos_token_id
    ids, labels, mask = _labels(trainer)
    eos = trainer.processing_class.eos_token_id
    for row in range(2):
        real = mask[row].bool()
        learned = labels[row][real & (labels[row] != -100)].tolist()
        assert learned.count(eos) == 1  # the reply's end of turn, kept
        assert (labels[row][~real] == -100).all()  # padding is never learned


def test_sft_trains_a_lora_adapter_that_eval_plays(tiny_lm, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    result = train_sft(
        out=tmp_path / "run",
        model=str(tiny_lm),
        demo_limit=8,
        max_steps=2,
        batch_size=4,
        learning_rate=1e-3,
        evaluation={"limit": 3, "families": ("speaker_switch",), "base": True, "batch_size": 3},
        eval_every=1,
        progress=False,
    )
    final = Path(result["model"])
    assert (final / "adapter_model.safetensors").exists() and (final / "adapter_config.json").exists()
    assert not list(final.glob("*.bin")) or not list(final.glob("adapter_model.bin"))
    config = json.loads((final / "adapter_config.json").read_text())
    assert config["r"] == 32 and config["lora_alpha"] == 64
    assert set(config["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj"}
    rows = [json.loads(line) for line in (tmp_path / "run" / "curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if r["kind"] == "train" and "loss" in r] == [1, 2]
    evals = {r["checkpoint"]: r for r in rows if r["kind"] == "eval"}
    assert set(evals) == {"step_1", "base", "final"} and "switch_mute" in evals["final"]["metrics"]
    assert evals["step_1"]["step"] == 1 and evals["final"]["step"] == 2
    assert (tmp_path / "run" / "checkpoints" / "step_1" / "adapter_model.safetensors").exists()
    assert len(read_jsonl(tmp_path / "run" / "demos.jsonl")) == 8
    assert list((tmp_path / "run" / "wandb").glob("offline-run-*"))
    results = (tmp_path / "run" / "evals" / "final" / "results.jsonl").read_text().splitlines()
    assert len(results) == 3
    with pytest.raises(FileExistsError, match="already holds a different training run"):
        train_sft(out=tmp_path / "run", model=str(tiny_lm), max_steps=1, progress=False)


def test_adapter_client_equals_the_merged_model(tiny_lm, tmp_path):
    """``hf:ADAPTER`` loads the base named in the adapter and merges it: replies equal those of
    a PeftModel built by hand; a missing base is a clear error."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_lm)
    peft = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, parameter in peft.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.linspace(-0.5, 0.5, parameter.numel()).view_as(parameter))
    adapter = tmp_path / "adapter"
    peft.save_pretrained(adapter)
    messages = [[{"role": "user", "content": "Set a timer for ten minutes."}]]
    via_client = TransformersChatClient(str(adapter), max_new_tokens=8)
    plain = TransformersChatClient(str(tiny_lm), max_new_tokens=8)
    plain.model = peft.merge_and_unload().eval()
    assert via_client.complete(messages) == plain.complete(messages)
    config = json.loads((adapter / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = str(tmp_path / "gone")
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(ChatClientError, match="its base model cannot be loaded"):
        TransformersChatClient(str(adapter))


def test_sft_settings_refuse_bad_values(tiny_lm, tmp_path):
    with pytest.raises(ValueError, match="SFT demonstrations exist for"):
        SFTSettings(out=tmp_path, model=str(tiny_lm), env_id="hear_gym/Onset-v0")
    with pytest.raises(ValueError, match="max_steps"):
        SFTSettings(out=tmp_path, model=str(tiny_lm), max_steps=0)
    with pytest.raises(ValueError, match="do not set split"):
        SFTSettings(out=tmp_path, model=str(tiny_lm), env_options={"split": "test"})
    with pytest.raises(ChatClientError):
        SFTSettings(out=tmp_path, model=str(tmp_path / "no_model"))
    with pytest.raises(ValueError, match=r"takes \['exclude_conditions', 'families'\], not \['feedback'\]"):
        SFTSettings(out=tmp_path, model=str(tiny_lm), demo_options={"feedback": "prosody"})


def test_cli_trains_sft_and_eval_plays_the_adapter(tiny_lm, tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    runner = CliRunner()
    out = tmp_path / "sft"
    args = ["train", "sft", "--out", str(out), "--model", str(tiny_lm), "--demo-limit", "4"]
    args += ["--demo-option", "exclude_conditions=switch"]
    tiny = ["--max-steps", "1", "--batch-size", "4", "--eval-limit", "2", "--no-eval-base", "--no-wandb"]
    result = runner.invoke(app, [*args, *tiny, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "final" in result.output and "switch_mute" in result.output
    saved = json.loads((out / "settings.json").read_text())["settings"]
    assert saved["demo_options"] == {"exclude_conditions": "switch"}
    unknown = runner.invoke(
        app, [*args[:-2], "--demo-option", "feedback=prosody", "--out", str(tmp_path / "x")]
    )
    assert unknown.exit_code == 2 and "takes ['exclude_conditions', 'families']" in unknown.output
    evaluation = runner.invoke(
        app,
        [
            "eval",
            "--env",
            "hear_gym/VoiceGate-v0",
            "--out",
            str(tmp_path / "eval"),
            "--cell",
            "llm@T",
            "--llm-client",
            f"hf:{out / 'final'}",
            "--limit",
            "2",
            "--no-progress",
        ],
    )
    assert evaluation.exit_code == 0, evaluation.output
    assert len((tmp_path / "eval" / "results.jsonl").read_text().splitlines()) == 2
    again = runner.invoke(app, [*args, *tiny, "--no-progress"])
    assert again.exit_code == 2 and "already holds this training run, finished" in again.output
    bad = runner.invoke(
        app,
        [
            "train",
            "grpo",
            "--out",
            str(tmp_path / "g"),
            "--model",
            str(tiny_lm),
            "--paired",
            "--vllm-mode",
            "server",
        ],
    )
    assert bad.exit_code == 2 and "server mode" in bad.output


def test_wandb_keeps_rows_logged_out_of_step_order(tmp_path):
    """The base model is evaluated after training, at step 0: W&B drops a row logged with a
    step below the last one, so the curve logs against its own step metric."""
    from training.llm.run_folder import WANDB_STEP, CurveLog

    class Run:
        def __init__(self) -> None:
            self.defined, self.logged = [], []

        def define_metric(self, name, step_metric=None):
            self.defined.append((name, step_metric))

        def log(self, data, step=None):
            assert step is None, "a step= would make W&B drop out-of-order rows"
            self.logged.append(data)

    run = Run()
    curve = CurveLog(tmp_path, run)
    curve.write({"kind": "train", "step": 87, "loss": 0.5})
    curve.write({"kind": "eval", "step": 0, "checkpoint": "base", "metrics": {"1st%": {"point": 0.1}}})
    assert ("*", WANDB_STEP) in run.defined
    assert run.logged == [
        {"train/loss": 0.5, WANDB_STEP: 87},
        {"eval_base/1st%": 0.1, WANDB_STEP: 0},
    ]
