"""Batched (lockstep) play and the optional Ray backend give exactly the episodes that one-by-one
play gives; LLM agents are built from a client spec."""

import json

import pytest

from agents.hear2act.baselines import StateAwareAgent
from agents.hear2act.llm import LLMAgent
from agents.llm.clients import MockChatClient
from agents.llm.factory import ClientAgentFactory, client_from_spec
from hear_gym.envs.hear2act.family import cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.eval.results import read_results
from hear_gym.eval.runner import run_evaluation

SIX = tuple(s.scenario_id for s in scenarios_for("dev")[:6])


def careful_reader(msgs):
    """A scripted stateless 'model': recommends options in turn, confirms on a resolved state."""
    user = msgs[-1]["content"]
    state = user.rsplit("CONCERN STATE: ", 1)[-1].split("\n", 1)[0] if "CONCERN STATE" in user else ""
    if state in {"satisfied", "warm", "enthusiastic", "relieved"}:
        return "[ACTION: CONFIRM] Great, let's go with it."
    return f"[ACTION: RECOMMEND] [OPTION: {user.count('[OPTION:') % 11 + 1}] How about this one?"


class CountingClient(MockChatClient):
    def __init__(self):
        super().__init__(careful_reader)
        self.batch_sizes = []

    def complete(self, batch):
        self.batch_sizes.append(len(batch))
        return super().complete(batch)


def canonical(path):
    return sorted(json.dumps(r, sort_keys=True) for r in read_results(path / "results.jsonl"))


CONFIG = run_config(
    cells=(cell("llm", "T+S", "prosody"), cell("rule", "T+S", "prosody")), item_ids=SIX, rollouts=2
)


def test_batched_play_gives_the_same_episodes_with_fewer_model_calls(tmp_path):
    one, many = CountingClient(), CountingClient()
    run_evaluation(
        tmp_path / "one", CONFIG, {"llm": lambda: LLMAgent(one), "rule": StateAwareAgent}, progress=False
    )
    run_evaluation(
        tmp_path / "many",
        CONFIG,
        {"llm": lambda: LLMAgent(many), "rule": StateAwareAgent},
        progress=False,
        batch_size=5,
    )
    assert canonical(tmp_path / "one") == canonical(tmp_path / "many")
    assert set(one.batch_sizes) == {1} and max(many.batch_sizes) == 5
    assert sum(one.batch_sizes) == sum(many.batch_sizes) and len(many.batch_sizes) < len(one.batch_sizes)


def test_unknown_backend_and_bad_batch_size_are_refused(tmp_path):
    agents = {"llm": lambda: LLMAgent(CountingClient()), "rule": StateAwareAgent}
    with pytest.raises(ValueError, match="backend"):
        run_evaluation(tmp_path, CONFIG, agents, progress=False, backend="dask")
    with pytest.raises(ValueError, match="batch_size"):
        run_evaluation(tmp_path, CONFIG, agents, progress=False, batch_size=0)


def test_ray_backend_matches_local_play(tmp_path):
    pytest.importorskip("ray")
    config = run_config(cells=(cell("rule", "T+S", "prosody"),), item_ids=SIX)
    run_evaluation(tmp_path / "local", config, {"rule": StateAwareAgent}, progress=False)
    run_evaluation(
        tmp_path / "ray", config, {"rule": StateAwareAgent}, progress=False, workers=2, backend="ray"
    )
    assert canonical(tmp_path / "local") == canonical(tmp_path / "ray")


def test_client_specs():
    with pytest.raises(ValueError, match="must be one of"):
        client_from_spec("gpt4")
    with pytest.raises(ValueError, match="openai:<base url>@<model>"):
        client_from_spec("openai:http://localhost:8000/v1")
    client = client_from_spec("openai:http://localhost:9/v1@tiny")
    assert client is client_from_spec("openai:http://localhost:9/v1@tiny")  # one client per spec
    agent = ClientAgentFactory(LLMAgent, "openai:http://localhost:9/v1@tiny")()
    assert isinstance(agent, LLMAgent) and agent.client is client
