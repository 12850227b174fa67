"""Every registered env can be played by a chat model: its family registers ``llm`` (reads the
words, access T) and ``audio_llm`` (hears the env's audio, access A+T), and the audio agent's
chat carries each clip it hears in its audio part."""

from __future__ import annotations

import gymnasium as gym
import pytest

from agents.llm.clients import MockChatClient
from agents.llm.parts import clips_of
from hear_gym.cli.common import available_agents
from hear_gym.core.registry import env_ids, family


@pytest.mark.parametrize("env_id", env_ids())
def test_the_audio_agent_hears_the_env_and_the_text_agent_reads_it(env_id):
    agents = available_agents(family(env_id))
    assert {"llm", "audio_llm"} <= set(agents)
    client = MockChatClient(lambda messages: "no idea")
    for name, access in (("llm", "T"), ("audio_llm", "A+T")):
        agent = agents[name].load()(client)
        env = gym.make(env_id, access=access, actions="text")
        observation, _ = env.reset(seed=0)
        _, _, _, _, info = env.step(agent.act(observation))  # a malformed reply is the env's to score
        clips = clips_of(client.calls[-1])
        if name == "audio_llm":
            length = int(observation["audio_length"][0])
            assert len(clips) == (1 if length else 0) and all(len(c) == length for c in clips)
        else:
            assert clips == []
        env.close()
