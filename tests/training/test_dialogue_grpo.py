"""Multi-turn GRPO over whole Hear2Act dialogues (training.llm.dialogue_grpo, training.llm.dialogue_rollout)
and its chat layout (agents.hear2act.dialogue_prompts, dialogue_llm), on a tiny random model.

A *scripted* model (a forward hook that overrides the tiny model's logits) makes the rollout's
replies known in advance, so token layouts, masks, cut rewards and the pad == EOS trap are checked
exactly; the end-to-end run uses the plain random model through TRL's ``GRPOTrainer``."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch
import transformers

from agents.hear2act.dialogue_llm import DialogueLLMAgent
from agents.hear2act.dialogue_prompts import dialogue_messages
from agents.hear2act.dialogue_task import CUT_RULE, DIALOGUE, make_dialogue_env
from agents.hear2act.prompts import system_prompt
from hear_gym.core.registry import family
from hear_gym.core.text import to_charset
from hear_gym.envs.hear2act.family import make
from training.llm.dialogue_grpo import DialogueGRPOSettings, train_dialogue_grpo, train_scenarios
from training.llm.dialogue_rollout import (
    DialogueRollout,
    episode_return_reward,
    prompt_ids,
    render,
    token_ids,
)
from training.llm.run_folder import CURVE_FILE, SETTINGS_FILE
from training.tiny_model import build_tiny_causal_lm

SCENARIOS = list(family("hear_gym/Hear2Act-v0").item_ids("train")[:2])
ASK = "[ACTION: ASK] What matters most to you?"
CLARIFY = "[ACTION: CLARIFY] Does this option fully work for you?"
ENV = {
    "feedback": "explicit",
    "reward": "tiered",
    "turn_cost": 0.05,
    "max_turns": 4,
}  # 3 replies, then truncated


# -- fixtures ----------------------------------------------------------------------------------------
@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """A tiny model gains nothing from threads, and on a busy 2-core machine torch's spinning
    threads make each step 100x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def eager(tiny, tmp_path_factory):
    """The tiny model made to end replies early (EOS's embedding row, tied to the output layer,
    moved toward the mean final hidden state), so a random dialogue takes several turns within
    a small cap and GRPO groups differ in return."""
    folder = tmp_path_factory.mktemp("eager") / "model"
    model, tokenizer = _load(tiny)
    prompt = DialogueRollout(DIALOGUE, SCENARIOS[:1], ENV).prompts[SCENARIOS[0]]
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([prompt_ids(tokenizer, prompt)]), output_hidden_states=True)
        mean = hidden.hidden_states[-1][0].mean(0)
        model.get_input_embeddings().weight[tokenizer.eos_token_id] += 1.5 * mean / mean.norm()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _load(folder, pad_is_eos: bool = False):
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    if pad_is_eos:
        tokenizer.pad_token = tokenizer.eos_token
        model.config.pad_token_id = model.generation_config.pad_token_id = tokenizer.eos_token_id
        assert tokenizer.pad_token_id == tokenizer.eos_token_id
    return model, tokenizer


def _trainer(model, tokenizer, cap: int):
    """What the rollout reads from a ``GRPOTrainer``."""
    args = SimpleNamespace(
        temperature=1.0, top_p=1.0, top_k=0, min_p=None, repetition_penalty=1.0, max_completion_length=cap
    )
    return SimpleNamespace(model=model, processing_class=tokenizer, args=args)


class Scripted:
    """Forces the model's replies: in every ``generate`` call, row i emits the tokens of
    ``scripts[i % len(scripts)]`` and then EOS. Records each call's raw prefill logits (the last
    position of every row) before overriding them."""

    def __init__(self, model, tokenizer, scripts):
        self.scripts = [token_ids(tokenizer, s) for s in scripts]
        self.eos, self.step, self.prefill_logits = tokenizer.eos_token_id, 0, []
        self.handle = model.register_forward_hook(self.hook, with_kwargs=True)

    def hook(self, module, args, kwargs, output):
        ids = kwargs["input_ids"]
        if ids.shape[1] > 1:
            self.step = 0
            self.prefill_logits.append(output.logits[:, -1].detach().clone())
        else:
            self.step += 1
        for row in range(ids.shape[0]):
            script = self.scripts[row % len(self.scripts)]
            target = script[self.step] if self.step < len(script) else self.eos
            output.logits[row, -1] = -1e4
            output.logits[row, -1, target] = 0.0
        return output


def _scripted_rollout(folder, scripts, cap=2_000, pad_is_eos=False, env=ENV, scenarios=SCENARIOS):
    model, tokenizer = _load(folder, pad_is_eos)
    rollout = DialogueRollout(DIALOGUE, scenarios, env)
    scripted = Scripted(model, tokenizer, scripts)
    prompts = [rollout.prompts[s] for s in scenarios]
    out = rollout(prompts, _trainer(model, tokenizer, cap))
    scripted.handle.remove()
    return out, rollout, model, tokenizer, scripted


def _segments(mask):
    """(start, end, is_model) runs of equal env_mask values."""
    runs, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((start, i, bool(mask[start])))
            start = i
    return runs


def _replay(scenario_id, replies, env=ENV):
    """The same dialogue played directly on the env: observations and the last info."""
    e = make_dialogue_env(scenario_id, env)
    observations = [e.reset(seed=0, options={"item_id": scenario_id})[0]]
    info = {}
    for reply in replies:
        observation, _, terminated, truncated, info = e.step(reply)
        observations.append(observation)
        if terminated or truncated:
            break
    return observations, info


# -- the chat layout -----------------------------------------------------------------------------------
def test_dialogue_messages_are_append_only_and_record_exactly_what_the_env_wrote():
    replies = [
        ASK,
        "garbage\nwith a line break \u2014 and a dash",
        "",
        CLARIFY,
        "[ACTION: RECOMMEND] [OPTION: 4] x",
    ]
    for scenario_id in family("hear_gym/Hear2Act-v0").item_ids("train")[::40]:
        env = make(access="T", actions="text", split="train", feedback="explicit", max_turns=20)
        observation, _ = env.reset(seed=3, options={"item_id": scenario_id})
        messages = dialogue_messages(observation)
        assert messages[0] == {"role": "system", "content": system_prompt(observation)}
        assert [m["role"] for m in messages[1:]] == [
            "user",
            "assistant",
            "user",
        ]  # request, opening, reaction
        for reply in replies:
            observation, _, terminated, truncated, info = env.step(reply)
            following = dialogue_messages(observation)
            assert following[: len(messages)] == messages
            recorded = to_charset(reply) or "[empty]"
            assert following[len(messages) :] == [
                {"role": "assistant", "content": recorded},
                {"role": "user", "content": observation["last_user_utterance"]},
            ]
            messages = following
            if terminated or truncated:
                break


@pytest.mark.parametrize("channel", ["concern_state", "inferred_state", "affect", "audio"])
def test_observations_with_a_per_turn_channel_or_audio_are_refused(channel):
    env = make(access="T", actions="text", split="train", feedback="explicit")
    observation, _ = env.reset(seed=0, options={"item_id": SCENARIOS[0]})
    with pytest.raises(ValueError, match="access 'T' only"):
        dialogue_messages({**observation, channel: "x"})


def test_a_real_state_condition_is_refused_and_the_agent_sends_the_chat():
    env = make(access="T+S", actions="text", split="train", feedback="explicit")
    observation, _ = env.reset(seed=0, options={"item_id": SCENARIOS[0]})
    with pytest.raises(ValueError, match="state channel"):
        dialogue_messages(observation)

    sent = []

    class Client:
        def complete(self, batch):
            sent.extend(batch)
            return [ASK] * len(batch)

    plain = make(access="T", actions="text", split="train", feedback="explicit")
    observation, _ = plain.reset(seed=0, options={"item_id": SCENARIOS[0]})
    agent = DialogueLLMAgent(Client())
    assert DialogueLLMAgent.required_access == ("T",)
    assert agent.act(observation) == ASK and sent == [dialogue_messages(observation)]


# -- the rollout --------------------------------------------------------------------------------------
def test_dataset_maps_each_prompt_to_its_scenario():
    ids = train_scenarios("hear_gym/Hear2Act-v0", 6)
    assert len({i.rsplit("-", 1)[0] for i in ids}) == 6  # spread over domains
    rollout = DialogueRollout(DIALOGUE, ids, ENV)
    rows = list(rollout.dataset())
    assert [r["item_id"] for r in rows] == ids
    for row in rows:
        env = make_dialogue_env(row["item_id"], ENV)
        assert row["prompt"] == dialogue_messages(env.reset(seed=0, options={"item_id": row["item_id"]})[0])


@pytest.mark.parametrize("pad_is_eos", [False, True], ids=["pad", "pad_is_eos"])
def test_user_tokens_never_enter_the_loss_and_every_reply_keeps_its_eos(tiny, pad_is_eos):
    """Traps (a) and (b): env_mask is 1 on exactly the sampled tokens (each reply and its EOS),
    0 on every token of the user's turns; prompt + completion is the template's rendering of the
    dialogue; with pad == EOS, the EOS tokens inside every context stay attended and each reply's
    EOS stays a model token (the two replies differ in length, so rows are padded)."""
    scripts = [ASK, CLARIFY]
    out, rollout, model, tokenizer, scripted = _scripted_rollout(tiny, scripts, pad_is_eos=pad_is_eos)
    eos = tokenizer.eos_token_id
    assert out["logprobs"] is None
    for row, scenario_id in enumerate(SCENARIOS):
        script = scripts[row]
        reply_ids = token_ids(tokenizer, script) + [eos]
        completion, mask = out["completion_ids"][row], out["env_mask"][row]
        assert len(completion) == len(mask)
        runs = _segments(mask)
        model_runs = [completion[a:b] for a, b, is_model in runs if is_model]
        assert model_runs == [reply_ids] * 3 and out["turns"][row] == 3  # max_turns=4: 3 replies
        assert sum(t == eos for t, m in zip(completion, mask, strict=True) if m) == 3
        observations, info = _replay(scenario_id, [script] * 3)
        assert out["episode_return"][row] == pytest.approx(info["episode"]["return"])
        assert out["cut"][row] is False and out["invalid_actions"][row] == 0
        for (a, b, _), observation in zip([r for r in runs if not r[2]], observations[1:], strict=False):
            text = tokenizer.decode(completion[a:b])
            assert observation["last_user_utterance"] in text and "<|user|>" in text
        # The whole dialogue is the chat template's rendering of the env's messages, token for token.
        full = render(tokenizer, dialogue_messages(observations[-1])[:-1], generation_prompt=False)
        expected = full[: full.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)]
        assert out["prompt_ids"][row] + completion == token_ids(tokenizer, expected)
    # The model saw every context as it is, unpadded: its prefill logits match a lone forward pass.
    for call, logits in enumerate(scripted.prefill_logits):
        for row in range(len(SCENARIOS)):
            starts = [a for a, _, is_model in _segments(out["env_mask"][row]) if is_model]
            context = out["prompt_ids"][row] + out["completion_ids"][row][: starts[call]]
            with torch.no_grad():
                alone = model(input_ids=torch.tensor([context])).logits[0, -1]
            torch.testing.assert_close(logits[row], alone, atol=1e-4, rtol=1e-4)
    if pad_is_eos:
        reference, *_ = _scripted_rollout(tiny, scripts, pad_is_eos=False)
        assert (
            reference["completion_ids"] == out["completion_ids"] and reference["env_mask"] == out["env_mask"]
        )


def test_a_dialogue_cut_by_the_token_cap_gets_the_defined_reward(tiny):
    """Trap (c): no final reward (not the tiered credit of the current option) plus the step
    rewards paid; an unfinished reply is charged like an invalid one."""
    scenario = SCENARIOS[:1]
    full, *_ = _scripted_rollout(tiny, [ASK], scenarios=scenario)
    mask = full["env_mask"][0]
    reply, user = [b - a for a, b, _ in _segments(mask)[:2]]
    assert full["cut"] == [False]

    # Cut inside the second reply: 3 of its tokens fit.
    out, *_ = _scripted_rollout(tiny, [ASK], cap=reply + user + 3, scenarios=scenario)
    assert out["cut"] == [True] and out["turns"] == [1]
    assert out["env_mask"][0] == [1] * reply + [0] * user + [1] * 3
    assert out["completion_ids"][0] == full["completion_ids"][0][: reply + user + 3]
    assert out["episode_return"] == [pytest.approx(-0.05 + (-0.1 - 0.05))]  # step 1's cost, the cut reply

    # Cut inside the user's answer: the reply was played (and paid), 2 env tokens fit.
    out, *_ = _scripted_rollout(tiny, [ASK], cap=reply + 2, scenarios=scenario)
    assert out["cut"] == [True] and out["turns"] == [1]
    assert out["env_mask"][0] == [1] * reply + [0] * 2
    assert out["episode_return"] == [pytest.approx(-0.05)]
    assert episode_return_reward([None], **out) == out["episode_return"]
    assert "no final reward" in CUT_RULE


# -- settings and the whole job --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_generations": 1}, "num_generations"),
        ({"env_options": {"reward": "success"}}, "feedback"),
        ({"env_options": {"feedback": "explicit", "access": "T+S"}}, "must not set"),
        ({"max_completion_length": 0}, "max_completion_length"),
        ({"n_scenarios": 10_000}, "n_scenarios"),
        ({"interface": "voice"}, "interface"),
        ({"max_tool_calls": 0}, "max_tool_calls"),
    ],
)
def test_bad_settings_are_refused(tiny, tmp_path, change, message):
    with pytest.raises(ValueError, match=message):
        DialogueGRPOSettings(out=tmp_path, model=tiny, **change)
    with pytest.raises(ValueError, match="local model folder"):
        DialogueGRPOSettings(out=tmp_path, model=tmp_path / "missing")


TINY_RUN = dict(
    interface="text",
    n_scenarios=2,
    scenarios_per_step=1,
    num_generations=2,
    max_completion_length=128,
    max_steps=2,
    learning_rate=1e-3,
    env_options={"feedback": "explicit", "reward": "tiered", "turn_cost": 0.02},
    wandb_project=None,
    evaluation=None,
)


def _curve(folder):
    rows = [json.loads(line) for line in (folder / CURVE_FILE).read_text().splitlines()]
    return [r for r in rows if r["kind"] == "train"]


def test_a_tiny_grpo_run_trains_and_saves(eager, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    evaluation = {"limit": 1, "base": False, "batch_size": 1}
    first = train_dialogue_grpo(out=tmp_path / "a", model=eager, **{**TINY_RUN, "evaluation": evaluation})
    curve = _curve(tmp_path / "a")
    assert [r["step"] for r in curve] == [1, 2]
    for row in curve:
        assert row["dialogues"] == 2 and 0.0 <= row["cut_fraction"] <= 1.0
        assert 0.0 <= row["invalid_action_rate"] <= 1.0 and row["completion_tokens"] <= 128
        assert {"reward", "success", "turns", "model_tokens", "loss"} <= set(row)
    # Multi-turn dialogues (user tokens in the completions) with a learning signal.
    assert any(r["turns"] >= 1 and r["model_tokens"] < r["completion_tokens"] for r in curve)
    assert any(r["loss"] != 0.0 for r in curve)
    final = tmp_path / "a" / "final"
    assert first["final"] == str(final) and (final / "adapter_model.safetensors").is_file()
    evaluated = [json.loads(line) for line in (tmp_path / "a" / CURVE_FILE).read_text().splitlines()]
    assert [r["checkpoint"] for r in evaluated if r["kind"] == "eval"] == ["final"]
    played = (tmp_path / "a" / "evals" / "final" / "results.jsonl").read_text().splitlines()
    assert len(played) == 1 and json.loads(played[0])["agent"] == "llm_dialogue"
    assert first["metrics"]["final"]["1st%"]["point"] in (0.0, 100.0)
    saved = json.loads((tmp_path / "a" / SETTINGS_FILE).read_text())
    assert saved["settings"]["num_generations"] == 2 and saved["settings"]["cut_rule"] == CUT_RULE
    assert saved["provenance"]["env_id"] == "hear_gym/Hear2Act-v0"
    assert {"torch", "transformers", "tokenizers", "trl"} <= set(saved["provenance"]["packages"])
    with pytest.raises(FileExistsError):
        train_dialogue_grpo(out=tmp_path / "a", model=eager, **TINY_RUN)


@pytest.mark.slow
def test_a_tiny_grpo_run_repeats_with_the_same_seed(eager, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    evaluation = {"limit": 1, "base": False, "batch_size": 1}
    train_dialogue_grpo(out=tmp_path / "a", model=eager, **{**TINY_RUN, "evaluation": evaluation})
    curve = _curve(tmp_path / "a")
    train_dialogue_grpo(out=tmp_path / "b", model=eager, **TINY_RUN)
    assert _curve(tmp_path / "b") == curve
    train_dialogue_grpo(out=tmp_path / "c", model=eager, **{**TINY_RUN, "seed": 1})
    assert _curve(tmp_path / "c") != curve

    whole = train_dialogue_grpo(
        out=tmp_path / "d", model=eager, **{**TINY_RUN, "max_steps": 1, "lora": {"enabled": False}}
    )
    assert (tmp_path / "d" / "final" / "model.safetensors").is_file() and whole["last"]["step"] == 1


def test_cli_trains_dialogue_grpo_and_plays_the_result(eager, tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    out = tmp_path / "cli"
    tiny = ["--n-scenarios", "2", "--scenarios-per-step", "1", "--num-generations", "2"]
    tiny += ["--max-completion-length", "128", "--max-steps", "1", "--eval-limit", "1", "--no-wandb"]
    tiny += ["--interface", "text"]
    result = CliRunner().invoke(
        app,
        [
            "train",
            "dialogue-grpo",
            "--out",
            str(out),
            "--model",
            str(eager),
            "--option",
            "turn_cost=0.02",
            *tiny,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "final" in result.output and "1st%" in result.output
    saved = json.loads((out / SETTINGS_FILE).read_text())["settings"]
    assert saved["env_options"] == {"feedback": "explicit", "turn_cost": 0.02}
