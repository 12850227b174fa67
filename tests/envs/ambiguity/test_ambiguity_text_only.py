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


def _check_at_chance(records):
    overall = accuracy(records, n_resamples=500)
    assert 0.4 <= overall.low <= 0.5 <= overall.high <= 0.6
    stats = pair_statistics(records, n_resamples=500)
    assert stats["both_right"].point == 0.0 and stats["both_right"].high == 0.0
    assert len(AUDIO_DECIDED_EPISODES) >= 100


def test_a_small_text_solver_sits_at_chance_on_minimal_pairs():
    """Default tier: a solver fitted on 60 train episodes (the bound holds for any solver)."""
    _check_at_chance(_records(TextOnlyAgent(trained_solver(limit=60)), "T-nopunct"))


@pytest.mark.slow  # the full train-split fit, and A+T renders every reading
@pytest.mark.parametrize("access", ["T-nopunct", "A+T"])
def test_the_text_only_baseline_sits_at_chance_on_minimal_pairs(access):
    _check_at_chance(_records(TextOnlyAgent(), access))
