import gymnasium as gym
import pytest

from agents.hear2act.llm import LLMAgent
from agents.hear2act.prompts import messages, system_prompt
from agents.llm.clients import MockChatClient, TransformersChatClient
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import run_evaluation
from training.tiny_model import build_tiny_causal_lm

SCENARIO = "budget_airline_tickets-00"


def env(**kwargs):
    return gym.make("hear_gym/Hear2Act-v0", actions="text", item_ids=[SCENARIO], **kwargs)


def test_prompt_cards():
    obs, _ = env().reset(seed=0)
    spoken, text = system_prompt(obs, "spoken"), system_prompt(obs, "text")
    assert spoken.startswith("You are a task-oriented service assistant for budget airline tickets.")
    assert "[ACTION: RECOMMEND] [OPTION: <number>] <assistant utterance>" in spoken
    assert "CLARIFY" not in spoken and "[ACTION: CLARIFY]" in text
    assert obs["options"] in spoken
    obs_s, info = env(access="T+S").reset(seed=0)
    user = messages(obs_s)[1]["content"]
    assert user.startswith(obs_s["transcript"]) and f"CONCERN STATE: {info['delivery_label']}" in user
    assert messages(obs)[1]["content"] == obs["transcript"]


def gold_seeker(msgs):
    """A scripted 'model': reads the state channel and the options like a careful reader would."""
    user = msgs[-1]["content"]
    state = user.rsplit("CONCERN STATE: ", 1)[-1].split("\n", 1)[0] if "CONCERN STATE" in user else ""
    if state in {"satisfied", "warm", "enthusiastic", "relieved"}:
        return "[ACTION: CONFIRM] Great, booking it."
    tried = user.count("[OPTION:")
    return f"[ACTION: RECOMMEND] [OPTION: {tried % 11 + 1}] How about this one?"


def test_llm_agent_plays_through_the_runner_with_a_mock_client(tmp_path):
    client = MockChatClient(gold_seeker)
    config = run_config(cells=(cell("llm", "T+S", "prosody"),), item_ids=(SCENARIO,))
    run_evaluation(tmp_path, config, {"llm": lambda: LLMAgent(client)}, progress=False)
    (record,) = read_results(tmp_path / "results.jsonl")
    assert record["success"] and record["terminated"]
    assert all(t["invalid_action"] is None for t in record["turns"])
    assert client.calls and client.calls[0][0]["role"] == "system"
    batch = LLMAgent(client).act_batch([env(access="T+S").reset(seed=s)[0] for s in (0, 1)])
    assert len(batch) == 2


def test_transformers_client_loads_a_tiny_offline_model(tmp_path):
    path = build_tiny_causal_lm(tmp_path / "tiny")
    client = TransformersChatClient(str(path), max_new_tokens=8)
    text_env = env()
    obs, _ = text_env.reset(seed=0)
    replies = LLMAgent(client).act_batch([obs, obs])
    assert len(replies) == 2 and replies[0] == replies[1]  # greedy: deterministic
    _, reward, terminated, _, info = text_env.step(replies[0])
    assert info["invalid_action"] is not None and reward < 0 and not terminated  # random weights


def test_audio_llm_agent_on_a_tiny_offline_audio_model(tmp_path):
    from agents.hear2act.llm import AudioLLMAgent
    from agents.llm.clients import TransformersAudioChatClient
    from training.tiny_model import build_tiny_audio_lm

    client = TransformersAudioChatClient(str(build_tiny_audio_lm(tmp_path / "tiny_audio")), max_new_tokens=6)
    for access in ("A", "A+T"):
        audio_env = gym.make(
            "hear_gym/Hear2Act-v0", actions="text", access=access, item_ids=[SCENARIO], assistant="spoken"
        )
        obs, _ = audio_env.reset(seed=0)
        first, second = AudioLLMAgent(client).act_batch([obs, obs])
        assert first == second  # greedy
        _, _, terminated, _, info = audio_env.step(first)
        assert info["invalid_action"] is not None and not terminated
    with pytest.raises(KeyError, match="audio condition"):
        AudioLLMAgent(client).act(env().reset(seed=0)[0])


@pytest.mark.slow  # 12 s: the default tier keeps its 5 minutes
def test_cli_builds_llm_agents_from_a_client_spec(tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    path = build_tiny_causal_lm(tmp_path / "tiny")
    base = [
        "eval",
        "--out",
        str(tmp_path / "run"),
        "--cell",
        "llm@T",
        "--feedback",
        "prosody",
        "--split",
        "test",
        "--limit",
        "2",
        "--max-turns",
        "3",
        "--no-progress",
    ]
    missing = CliRunner().invoke(app, base)
    assert missing.exit_code != 0 and "--llm-client" in missing.output
    result = CliRunner().invoke(app, [*base, "--llm-client", f"hf:{path}", "--batch-size", "2"])
    assert result.exit_code == 0, result.output
    records = read_results(tmp_path / "run" / "results.jsonl")
    assert len(records) == 2 and all(r["agent"] == "llm" and r["turn_limit"] for r in records)


@pytest.mark.slow  # 9 s: the default tier keeps its 5 minutes
def test_batched_generation_matches_one_by_one(tmp_path):
    """Left padding: a batch of prompts of different lengths gets the replies each prompt gets
    alone (right padding would shift the shorter prompts' continuations)."""
    from agents.hear2act.llm import AudioLLMAgent
    from agents.llm.clients import TransformersAudioChatClient
    from training.tiny_model import build_tiny_audio_lm

    ids = ["budget_airline_tickets-00", "meditation_apps-03", "wine_club_memberships-07"]
    text = TransformersChatClient(str(build_tiny_causal_lm(tmp_path / "t")), max_new_tokens=12)
    audio = TransformersAudioChatClient(str(build_tiny_audio_lm(tmp_path / "a")), max_new_tokens=12)
    for agent, access in ((LLMAgent(text), "T+S"), (AudioLLMAgent(audio), "A+T")):
        bench = gym.make("hear_gym/Hear2Act-v0", actions="text", access=access, item_ids=ids)
        observations = [bench.reset(seed=i, options={"item_id": s})[0] for i, s in enumerate(ids)]
        assert agent.act_batch(observations) == [agent.act(o) for o in observations]
