"""One GRPO step through the factory on the tiny tool-calling model: TRL runs the tool loop, the
env's return is the reward, it reaches the advantages and moves the weights the way it says; a
paired group keeps its two sides through ``reset(**row)``.

A randomly initialized model writes no parsable tool call, so generation is scripted: each
rollout's turns are fixed token sequences (real ``<tool_call>`` blocks in the model's chat
format). Everything after generation is TRL's and the env's: parsing the calls, running the
tools, appending their results, scoring, advantages, the loss and the optimizer step.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from hear_gym.integrations.trl import environment_factory, episode_rows
from training.tiny_model import build_tiny_causal_lm

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
ONSET, VOICEGATE = "hear_gym/Onset-v0", "hear_gym/VoiceGate-v0"
DONE = "Done.<|im_end|>"  # an answer without a tool call: TRL's loop ends there


def call(name: str, **arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call><|im_end|>"


@pytest.fixture(scope="module")
def tool_lm(tmp_path_factory) -> Path:
    return build_tiny_causal_lm(
        tmp_path_factory.mktemp("models") / "tool", vocab_size=512, hidden=32, layers=1, tool_calling=True
    )


class ScriptedTurns:
    """Stands in for ``GRPOTrainer._generate_single_turn``: rollout i's t-th generation is
    ``turns[i][t]``. TRL generates again only for the rollouts whose last turn called a tool, in
    batch order, which is exactly the rollouts with a t-th turn."""

    def __init__(self, tokenizer, turns: list[list[str]]) -> None:
        self.ids = [[tokenizer(t, add_special_tokens=False)["input_ids"] for t in ts] for ts in turns]
        self.turn = 0

    def __call__(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        live = [i for i, turns in enumerate(self.ids) if len(turns) > self.turn]
        assert len(live) == len(prompt_ids)
        out = [self.ids[i][self.turn] for i in live]
        self.turn += 1
        return out, None


def grpo_trainer(model: Path, rows, factory, turns, tmp_path, trainer_class=None, **config):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(model)
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=len(turns),
        num_generations=len(turns),
        max_completion_length=1024,
        max_steps=1,
        loss_type="dapo",
        optim="sgd",
        learning_rate=0.05,
        use_cpu=True,
        bf16=False,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
        **config,
    )
    trainer = (trainer_class or GRPOTrainer)(
        model=str(model),
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
    )
    trainer._generate_single_turn = ScriptedTurns(tokenizer, turns)
    seen: dict = {}
    score = trainer._generate_and_score_completions

    def scored(inputs):
        output = score(inputs)
        seen.update(output, environments=list(trainer.environments), before=_model_logps(trainer, output))
        return output

    trainer._generate_and_score_completions = scored
    return trainer, seen


def _model_logps(trainer, output) -> torch.Tensor:
    """Each completion's summed log-probability over the tokens the model wrote."""
    ids = torch.cat([output["prompt_ids"], output["completion_ids"]], dim=1)
    mask = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
    with torch.no_grad():
        logits = trainer.model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
    n = output["completion_ids"].size(1)
    logps = torch.log_softmax(logits[:, -n:], dim=-1).gather(-1, output["completion_ids"][:, :, None])[..., 0]
    model_tokens = output["completion_mask"] * output.get(
        "tool_mask", torch.ones_like(output["completion_mask"])
    )
    return (logps * model_tokens).sum(dim=1)


def _example_value(schema: dict):
    if "enum" in schema:
        return schema["enum"][0]
    return {"integer": 2, "number": 0.5, "boolean": True}.get(schema.get("type"), "kitchen")


def test_trls_parser_reads_every_tool_call_the_learning_vocabulary_writes(tmp_path):
    """The learning models' vocabulary has each call's fixed parts as whole tokens
    (``tool_call_frames``). A call written in those tokens parses back to itself through the
    parser TRL's tool loop uses; had a frame swallowed a ``<tool_call>`` tag, transformers' parser
    would read the call as plain text and GRPO would see no calls at all."""
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import add_response_schema, parse_response

    from hear_gym.core.registry import env_ids
    from hear_gym.integrations.trl import offered_tools
    from training.tiny_model import _tokenizer, tool_call_frames

    frames = set(tool_call_frames())
    # the learning models' tokenizer (LEARNING_TOOL_LM's vocabulary, smaller), saved and loaded
    _tokenizer(512, tool_calling=True, whole_instructions=True).save_pretrained(tmp_path)
    tokenizer = add_response_schema(AutoTokenizer.from_pretrained(tmp_path))
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, return_dict=True
    )["input_ids"]
    checked = 0
    for env_id in env_ids():
        for method in offered_tools(environment_factory(env_id)()):
            schema = get_json_schema(method)["function"]
            arguments = {k: _example_value(v) for k, v in schema["parameters"].get("properties", {}).items()}
            ids = tokenizer(call(schema["name"], **arguments), add_special_tokens=False)["input_ids"]
            parsed = parse_response(tokenizer, ids, prefix=prefix)
            calls = [c["function"] for c in parsed.get("tool_calls", [])]
            assert calls == [{"name": schema["name"], "arguments": arguments}], (env_id, parsed)
            tokens = tokenizer.convert_ids_to_tokens(ids)
            assert tokens[0] == "<tool_call>" and tokens[1] in frames, tokens  # the frames are used
            assert tokens[-3] in frames and tokens[-2:] == ["</tool_call>", "<|im_end|>"], tokens
            checked += 1
    assert checked >= 10


def test_one_grpo_step_through_the_factory_trains_on_the_envs_return(tool_lm, tmp_path):
    """Onset, five prefixes: two rollouts follow the targets call by call (multi-turn through
    TRL's tool loop), two act at once and stop (the rest is played out as malformed)."""
    row = episode_rows(ONSET, n=1, seed=0)[0]
    probe = environment_factory(ONSET)()
    probe.reset(**row)
    targets = probe._env.unwrapped.targets
    good = [call("wait") if t == "Wait" else call("act", action=t) for t in targets] + [DONE]
    bad = [call("act", action="Interrupt-Safe"), DONE]
    trainer, seen = grpo_trainer(
        tool_lm,
        [row],
        environment_factory(ONSET),
        [good, good, bad, bad],
        tmp_path,
        max_tool_calling_iterations=6,
    )
    trainer.train()

    environments = seen["environments"]
    returns = [e.episode_return for e in environments]
    assert [len(e.replies) for e in environments] == [5] * 4 and environments[2].replies[1:] == [""] * 4
    best = float(sum(t != "Wait" for t in targets))  # +1 at every prefix from the onset on
    assert returns == [best, best, -5.0, -5.0]
    logged = trainer.state.log_history[0]
    assert logged["rewards/OnsetEnvironment/mean"] == pytest.approx(sum(returns) / 4)
    assert logged["tools/call_frequency"] == pytest.approx((5 + 5 + 1 + 1) / 4)
    advantages = seen["advantages"]
    assert (advantages[:2] > 0).all() and (advantages[2:] < 0).all()
    assert (seen["tool_mask"] == 0).any()  # tool results are in the completion, out of the loss
    moved = _model_logps(trainer, seen) - seen["before"]
    assert moved[:2].mean() > moved[2:].mean()  # the rewarded completions gained on the others
    assert float((advantages * moved).sum()) > 0


@pytest.mark.slow
def test_paired_grpo_through_the_factory_keeps_each_side_of_a_pair_in_its_half(tool_lm, tmp_path):
    from agents.voicegate.grpo_items import item_pairs
    from hear_gym.envs.voicegate.items.generator import all_items
    from training.llm.paired_grpo import PairedGRPOTrainer

    plus, minus = item_pairs("train", ("speaker_switch",), paired=True, limit=1)[0]
    row = {**episode_rows(VOICEGATE, [plus], seed=4)[0], "item_id_minus": minus}
    tool = {i.item_id: i for i in all_items()}[plus].utterances[-1].tool
    schema = next(t for t in json.loads(_inventory()) if t["name"] == tool)["parameters"]
    arguments = {k: 1 if v["type"] == "integer" else "x" for k, v in schema["properties"].items()}
    same = [call(tool, **arguments), DONE]
    trainer, seen = grpo_trainer(
        tool_lm,
        [row],
        environment_factory(VOICEGATE),
        [same] * 4,
        tmp_path,
        trainer_class=PairedGRPOTrainer,
        max_tool_calling_iterations=2,
    )
    trainer.train()

    environments = seen["environments"]
    assert [e.item_id for e in environments] == [plus, plus, minus, minus]
    assert [e.episode["item_id"] for e in environments] == [plus, plus, minus, minus]
    assert [e.episode_return for e in environments] == [1.0, 1.0, -1.0, -1.0]  # the switch should mute
    assert (seen["advantages"][:2] > 0).all() and (seen["advantages"][2:] < 0).all()
    assert trainer.state.log_history[0]["paired/dropped_group_fraction"] == 0.0


def _inventory() -> str:
    from hear_gym.envs.voicegate.items.pools import tool_inventory

    return json.dumps(tool_inventory())


@pytest.mark.slow
def test_dialogue_grpo_trains_through_the_factory_by_default(tool_lm, tmp_path, monkeypatch):
    """``training.llm.dialogue_grpo`` with its default interface: TRL's environment_factory on
    Hear2Act, the curve from the scored rollouts, and the base and final models evaluated on a
    held-out scenario through the same factory. (A random model writes no tool call, so every
    dialogue is played out and the advantages are zero: this checks the plumbing, not learning.)"""
    from training.llm.dialogue_grpo import PLAYED_OUT, train_dialogue_grpo
    from training.llm.run_folder import CURVE_FILE, SETTINGS_FILE

    monkeypatch.setenv("WANDB_MODE", "offline")
    result = train_dialogue_grpo(
        out=tmp_path / "run",
        model=tool_lm,
        n_scenarios=2,
        scenarios_per_step=1,
        num_generations=2,
        max_completion_length=32,
        max_steps=2,
        env_options={"feedback": "explicit", "reward": "tiered", "turn_cost": 0.02, "max_turns": 4},
        evaluation={"limit": 1, "base": True, "batch_size": 1},
        wandb_project=None,
        device="cpu",
    )
    rows = [json.loads(line) for line in (tmp_path / "run" / CURVE_FILE).read_text().splitlines()]
    train = [r for r in rows if r["kind"] == "train"]
    assert [r["step"] for r in train] == [1, 2] and all(r["dialogues"] == 2 for r in train)
    assert {"reward", "success", "played_out_fraction", "calls", "invalid_call_rate", "loss"} <= set(train[0])
    assert [(r["checkpoint"], r["step"]) for r in rows if r["kind"] == "eval"] == [("base", 0), ("final", 2)]
    assert set(result["metrics"]["final"]) == {"return", "success"}
    assert result["metrics"]["final"]["return"]["n_scenarios"] == 1
    assert (tmp_path / "run" / "final" / "adapter_model.safetensors").is_file()
    saved = json.loads((tmp_path / "run" / SETTINGS_FILE).read_text())["settings"]
    assert saved["interface"] == "tools" and saved["cut_rule"] == PLAYED_OUT
