"""Validity: a text-only solver cannot decide a minimal pair whose readings differ only in how they
are said. It reads the words; both readings show it the same words, so it answers both the same
way. Its accuracy on the test split's audio-decided pairs must sit at chance: the 95% pair-bootstrap
interval holds 50% and no pair has both readings right. A leak in the env (a different transcript,
question or option order between the two readings) would break the second bound at once."""

import gymnasium as gym
import pytest

from agents.ambiguity.baselines import TextOnlyAgent
from agents.ambiguity.text_solver import trained_solver
from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair
from hear_gym.envs.ambiguity.metrics import accuracy, pair_statistics

ENV_ID = "hear_gym/Ambiguity-v0"
AUDIO_DECIDED_EPISODES = [
    e.episode_id
    for i in all_items()
    if isinstance(i, PhonologicalPair) and i.split == "test" and i.contrast in AUDIO_DECIDED
    for e in i.episodes()
]


def _records(agent, access):
    env = gym.make(ENV_ID, access=access, item_ids=AUDIO_DECIDED_EPISODES)
    records = []
    for episode_id in AUDIO_DECIDED_EPISODES:
        obs, _ = env.reset(options={"item_id": episode_id})
        records.append(env.step(agent.act(obs))[4]["episode"])
    return records


@pytest.fixture(scope="module")
def agent():
    return TextOnlyAgent(trained_solver(limit=150))  # a small fit: the bound holds for any solver


@pytest.mark.parametrize(
    "access",
    ["T-nopunct", pytest.param("A+T", marks=pytest.mark.slow)],  # A+T renders every reading
)
def test_text_only_sits_at_chance_on_minimal_pairs(agent, access):
    records = _records(agent, access)
    overall = accuracy(records, n_resamples=500)
    assert 0.4 <= overall.low <= 0.5 <= overall.high <= 0.6
    stats = pair_statistics(records, n_resamples=500)
    assert stats["both_right"].point == 0.0 and stats["both_right"].high == 0.0
    assert len(AUDIO_DECIDED_EPISODES) >= 100
