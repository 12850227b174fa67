"""Ambiguity agents through the one runner: the chat agent's prompt and replies (mock client),
the baselines' actions, and the family's summary and tables of a run."""

from importlib.metadata import entry_points

import gymnasium as gym
import pytest

from agents.ambiguity.baselines import FirstOptionAgent
from agents.ambiguity.llm import AMBIGUITY_INSTRUCTION, AmbiguityChatAgent
from agents.llm.clients import MockChatClient
from agents.llm.parts import clips_of
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.tables import rows
from hear_gym.envs.ambiguity.family import ENV_ID, FAMILY
from hear_gym.eval.pipeline import evaluate


def test_every_registered_agent_loads():
    names = {ep.name for ep in entry_points(group=FAMILY.agent_group)}
    assert {"random", "first_option", "text_only", "llm", "audio_llm", "ppo"} <= names


def test_the_chat_agent_sends_the_transcript_and_question_and_its_letter_is_scored():
    seen = []

    def reply(messages):
        seen.append(messages)
        return "B"

    agent = AmbiguityChatAgent(MockChatClient(reply))
    env = gym.make(
        ENV_ID, access="T-nopunct", actions=agent.action_format, split="test", phenomena=["coreference"]
    )
    obs, info = env.reset(seed=1)
    _, reward, _, _, info = env.step(agent.act(obs))
    system, user = seen[0]
    assert system == {"role": "system", "content": AMBIGUITY_INSTRUCTION}
    assert obs["transcript"] in user["content"] and obs["question"] in user["content"]
    assert info["decision"] == 1 and reward == float(info["answer"] == 1)


def test_a_run_is_summarized_per_language_and_row(tmp_path):
    test = FAMILY.item_ids("test")
    episodes = tuple(
        [e for e in test if e.startswith("omission-zh")][:15]
        + [e for e in test if e.startswith("semantic-en")][:15]
    )
    cell = Cell("first_option", "T-nopunct")
    metadata = evaluate(
        tmp_path, RunConfig(ENV_ID, (cell,), episodes), {"first_option": FirstOptionAgent}, progress=False
    )
    summary = metadata["cells"][cell.name]
    assert summary["n_episodes"] == 30
    assert set(summary["metrics"]) >= {"en", "zh", "all"}
    (table,) = FAMILY.tables(metadata)
    labels = [r[0] for r in rows(table)]
    assert "overall" in labels and "omission/detection" in labels


class _RecordingAudioClient:
    """Answers every audio chat with one letter and keeps what it was sent."""

    hears = True

    def __init__(self, letter: str) -> None:
        self.letter, self.sent = letter, []

    def complete(self, chats):
        self.sent += chats
        return [self.letter] * len(chats)


def test_the_audio_chat_agent_hears_the_turn_and_reads_what_the_condition_shows():
    from agents.ambiguity.llm import AmbiguityAudioChatAgent

    for access in ("A", "A+T"):
        client = _RecordingAudioClient("A")
        env = gym.make(ENV_ID, access=access, actions="text", split="test", phenomena=["coreference"])
        obs, _ = env.reset(seed=1)
        _, reward, _, _, info = env.step(AmbiguityAudioChatAgent(client).act(obs))
        (messages,) = client.sent
        clips = clips_of(messages)  # the audio part carries its clip
        assert len(clips) == 1 and len(clips[0]) == int(obs["audio_length"][0]) > 0
        assert (clips[0] == obs["audio"][: len(clips[0])]).all()
        text = messages[1]["content"][1]["text"]
        assert obs["transcript"] in text and obs["question"] in text
        assert ("[speech]" in text) == (access == "A")  # A shows no words
        assert info["decision"] == 0 and reward == float(info["answer"] == 0)


@pytest.mark.slow
def test_the_audio_chat_agent_on_a_tiny_offline_audio_model(tmp_path):
    from agents.ambiguity.llm import AmbiguityAudioChatAgent
    from agents.llm.clients import TransformersAudioChatClient
    from training.tiny_model import build_tiny_audio_lm

    client = TransformersAudioChatClient(str(build_tiny_audio_lm(tmp_path / "tiny_audio")), max_new_tokens=4)
    env = gym.make(ENV_ID, access="A+T", actions="text", split="test", phenomena=["phonological"])
    obs, _ = env.reset(seed=0)
    first, second = AmbiguityAudioChatAgent(client).act_batch([obs, obs])
    assert first == second  # greedy
    _, reward, terminated, _, info = env.step(first)
    assert terminated and reward in (0.0, 1.0)
