"""A factory that holds a model (``release()``) is told when the run needs no more of its agents:
after its agent's last episode in one process, before another cell's model loads; and a model a
chat-client spec loaded leaves memory then."""

from __future__ import annotations

import gc
import weakref

from agents.voicegate.baselines import AlwaysMuteAgent
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.runner import run_evaluation

ENV_ID = "hear_gym/VoiceGate-v0"


class Recording:
    """A factory of mute agents that logs each agent it builds and each release."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def __call__(self):
        self.log.append(("build", self.name))
        return AlwaysMuteAgent()

    def release(self) -> None:
        self.log.append(("release", self.name))


def _config(*agents: str) -> RunConfig:
    episodes = tuple(family(ENV_ID).item_ids("test")[:4])
    return RunConfig(ENV_ID, tuple(Cell(a, "T") for a in agents), episodes, 1, seed=0)


def test_a_cell_is_released_before_the_next_cell_builds_its_agents(tmp_path):
    log: list = []
    agents = {name: Recording(name, log) for name in ("first", "second")}
    run_evaluation(tmp_path / "batched", _config("first", "second"), agents, progress=False, batch_size=2)
    first_release = log.index(("release", "first"))
    assert ("build", "first") not in log[first_release:]  # released after its last agent
    assert log.index(("build", "second")) > first_release  # and before the next cell's first
    assert log.count(("release", "first")) >= 1 and log[-1][0] == "release"
    log.clear()
    run_evaluation(tmp_path / "interleaved", _config("first", "second"), agents, progress=False)
    builds = [i for i, (kind, _) in enumerate(log) if kind == "build"]
    releases = [i for i, (kind, _) in enumerate(log) if kind == "release"]
    assert min(releases) > max(builds)  # cells alternate episode by episode: released at the end


def test_a_spec_client_leaves_memory_when_its_factory_is_released(tmp_path):
    from agents.llm.chat import ChatAgent
    from agents.llm.clients import MockChatClient
    from agents.llm.factory import ClientAgentFactory, _loaded, client_from_spec

    class Mute(ChatAgent):
        required_access = ("T",)

        def __init__(self, client) -> None:
            self.client = client

        def act_batch(self, observations):
            return ["[Mute]"] * len(observations)

    spec = "openai:http://127.0.0.1:9/v1@tiny"
    factory = ClientAgentFactory(Mute, spec)
    _loaded[spec] = MockChatClient(lambda m: "[Mute]")  # stands in for a loaded model
    held = weakref.ref(client_from_spec(spec))
    run_evaluation(tmp_path / "run", _config("mute"), {"mute": factory}, progress=False, batch_size=2)
    gc.collect()
    assert spec not in _loaded and held() is None  # nothing keeps it: its memory is free
