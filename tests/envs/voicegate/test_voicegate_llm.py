"""LLM agents in VoiceGate: the instruction carries the tool inventory and the grammar, replies
go through the env's strict parser, malformed replies are scored (not raised), and an audio
LLM (tiny offline model) hears the input."""

import gymnasium as gym

import hear_gym  # noqa: F401
from agents.llm.clients import MockChatClient
from agents.voicegate.baselines import TextOnlyGateAgent, respond_to
from agents.voicegate.llm import AudioLLMGateAgent, LLMGateAgent
from hear_gym.envs.voicegate.family import item_ids, run_config
from hear_gym.envs.voicegate.metrics import headline_metrics
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import run_evaluation


def run_gate(factory, out, name, families, access="T", **kwargs):
    run_evaluation(
        out, run_config(name, access, item_ids("test", families)), {name: factory}, progress=False, **kwargs
    )
    return read_results(out / "results.jsonl")


def _reads_the_last_request(messages):
    system, user = messages
    assert "unlock_door" in system["content"] and "<|TOOL|>" in system["content"]
    return respond_to(user["content"].split(". ")[-1])


class CountingClient(MockChatClient):
    def __init__(self):
        super().__init__(_reads_the_last_request)
        self.model_calls = 0

    def complete(self, batch):
        self.model_calls += 1
        return super().complete(batch)


def test_llm_gate_agent_through_the_runner(tmp_path):
    client = MockChatClient(_reads_the_last_request)
    metrics = headline_metrics(
        run_gate(lambda: LLMGateAgent(client), tmp_path, "mock_llm", ("speaker_switch",))
    )
    assert metrics["switch_mute"].point == 0.0 and metrics["text_only_tool"].point >= 0.9


def test_batched_and_parallel_play_give_the_same_records(tmp_path):
    def canonical(records):
        return sorted((r["key"], r["reply"], r["outcome"]["correct"]) for r in records)

    one, many = CountingClient(), CountingClient()
    alone = run_gate(lambda: LLMGateAgent(one), tmp_path / "one", "llm", ("self_talk",))
    batched = run_gate(lambda: LLMGateAgent(many), tmp_path / "many", "llm", ("self_talk",), batch_size=8)
    parallel = run_gate(TextOnlyGateAgent, tmp_path / "two", "text_only", ("self_talk",), workers=2)
    assert canonical(alone) == canonical(batched) and many.model_calls < one.model_calls == len(alone)
    assert canonical(parallel) == canonical(
        run_gate(TextOnlyGateAgent, tmp_path / "solo", "text_only", ("self_talk",))
    )


def test_malformed_llm_replies_are_scored_not_raised(tmp_path):
    client = MockChatClient(lambda m: "Sure! I'll do that. [Mute]")
    records = run_gate(lambda: LLMGateAgent(client), tmp_path, "chatty", ("self_talk",))
    # a mute token inside prose is malformed but no tool syntax: the paper's plain -1 of a wrong action
    assert all(r["outcome"]["action"]["kind"] == "malformed" and r["reward"] == -1.0 for r in records)
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
