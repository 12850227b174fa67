"""LLM agents in VoiceGate: the instruction carries the tool inventory and the grammar, replies
go through the env's strict parser, malformed replies are scored (not raised), and an audio
LLM (tiny offline model) hears the input."""

import gymnasium as gym

import hear_gym  # noqa: F401
from agents.llm.clients import MockChatClient
from agents.voicegate.llm import AudioLLMGateAgent, LLMGateAgent
from agents.voicegate.baselines import respond_to
from hear_gym.envs.voicegate.runner import GateRunConfig, run_gate_evaluation
from hear_gym.envs.voicegate.metrics import headline_metrics


def _reads_the_last_request(messages):
    system, user = messages
    assert "unlock_door" in system["content"] and "<|TOOL|>" in system["content"]
    return respond_to(user["content"].split(". ")[-1])


def test_llm_gate_agent_through_the_runner(tmp_path):
    agent = LLMGateAgent(MockChatClient(_reads_the_last_request))
    config = GateRunConfig(agent="mock_llm", families=("speaker_switch",), access="T")
    metrics = headline_metrics(run_gate_evaluation(agent, tmp_path, config, progress=False))
    assert metrics["switch_mute"].point == 0.0 and metrics["text_only_tool"].point >= 0.9


def test_malformed_llm_replies_are_scored_not_raised(tmp_path):
    agent = LLMGateAgent(MockChatClient(lambda m: "Sure! I'll do that. [Mute]"))
    config = GateRunConfig(agent="chatty", families=("self_talk",), access="T")
    records = run_gate_evaluation(agent, tmp_path, config, progress=False)
    assert all(r["outcome"]["action"]["kind"] == "malformed" and r["reward"] == -1.2 for r in records)
    assert headline_metrics(records)["malformed"].point == 1.0


def test_audio_llm_gate_agent_on_a_tiny_offline_audio_model(tmp_path):
    from agents.llm.clients import TransformersAudioChatClient
    from training.tiny_model import build_tiny_audio_lm

    client = TransformersAudioChatClient(str(build_tiny_audio_lm(tmp_path / "tiny_audio")), max_new_tokens=6)
    agent = AudioLLMGateAgent(client)
    for conditions in (["switch"], ["text_only"]):
        env = gym.make("hear_gym/VoiceGate-v0", actions="text", access="A", conditions=conditions)
        obs, _ = env.reset(seed=0)
        first, second = agent.act_batch([obs, obs])
        assert first == second  # greedy
        _, _, terminated, _, info = env.step(first)
        assert terminated and info["outcome"]["action"]["kind"] in ("mute", "tool", "answer", "malformed")
