"""The streaming env: five decisions per trajectory, the documented rewards, what each access
condition shows, and clear errors for bad input."""

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.core.text import SPEECH_PLACEHOLDER
from hear_gym.envs.onset import features
from hear_gym.envs.onset.actions import ACTIONS, INVALID, index_of, parse_reply
from hear_gym.envs.onset.env import REWARDS, decision_reward, token_fraction_text
from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.scenes import rendered_group

EPISODE = "book_uncertainty-00/a/noise15"


def _play(env, decisions):
    obs, info = env.reset(seed=0, options={"item_id": EPISODE})
    steps = [(obs, info)]
    for decision in decisions:
        obs, reward, terminated, truncated, info = env.step(decision)
        steps.append((obs, info, reward, terminated))
    return steps


def test_an_episode_streams_five_prefixes_and_scores_each_decision():
    env = gym.make("hear_gym/Onset-v0", access="A+T")
    obs, info = env.reset(seed=0, options={"item_id": EPISODE})
    targets, lengths = [], []
    for k in range(5):
        assert obs["prefix_index"][0] == k and info["prefix_index"] == k
        assert obs["text"] == token_fraction_text(groups_by_id()["book_uncertainty-00"].transcript, k)
        lengths.append(int(obs["audio_length"][0]))
        targets.append(info["target"])
        obs, reward, terminated, truncated, info = env.step(index_of(info["target"]))
        assert reward == (0.0 if targets[-1] == "Wait" else REWARDS["correct"])
        assert terminated == (k == 4) and not truncated
    record = info["episode"]
    assert record["predictions"] == record["targets"] == targets
    assert record["targets"][: record["onset_index"]] == ["Wait"] * record["onset_index"]
    assert lengths == sorted(lengths) and lengths[-1] == record["audio"]["prefix_ends"][-1]
    with pytest.raises(RuntimeError):
        env.step(0)


def test_reward_table():
    assert decision_reward("Wait", "Wait") == 0.0
    assert decision_reward("Think", "Wait") == REWARDS["internal"]
    assert decision_reward("Call-Tool", "Wait") == REWARDS["exposed"]
    assert decision_reward("Call-Tool", "Call-Tool") == REWARDS["correct"]
    assert decision_reward("Wait", "Call-Tool") == REWARDS["late_wait"]
    assert decision_reward("Abstain", "Call-Tool") == REWARDS["internal"]
    assert decision_reward("Interrupt-Safe", "Call-Tool") == REWARDS["exposed"]
    assert decision_reward(INVALID, "Wait") == REWARDS["invalid"]


def test_access_conditions_show_what_they_grant():
    words = gym.make("hear_gym/Onset-v0", access="T").reset(seed=0, options={"item_id": EPISODE})[0]
    assert set(words) == {"text", "prefix_index", "action_mask"} and words["text"] != SPEECH_PLACEHOLDER
    audio = gym.make("hear_gym/Onset-v0", access="A").reset(seed=0, options={"item_id": EPISODE})[0]
    assert audio["text"] == SPEECH_PLACEHOLDER and audio["audio_length"][0] > 0
    assert not np.any(audio["audio"][audio["audio_length"][0] :])  # nothing beyond the prefix
    text = token_fraction_text("one two three four five six seven eight nine ten", 1)
    assert text == "one two three four"


def test_text_actions_parse_labels_and_record_invalid_replies():
    assert parse_reply(" call-tool. ") == "Call-Tool" and parse_reply("call the tool") == INVALID
    env = gym.make("hear_gym/Onset-v0", access="T", actions="text")
    env.reset(seed=0, options={"item_id": EPISODE})
    _, reward, _, _, info = env.step("I think we should wait")
    assert info["decision"] == INVALID and reward == REWARDS["invalid"]
    _, reward, _, _, info = env.step("Wait")
    assert info["decision"] == "Wait"


def test_bad_input_gets_clear_errors():
    env = gym.make("hear_gym/Onset-v0", access="T")
    env.reset(seed=0)
    for bad in (6, -1, 1.0, "Wait"):
        with pytest.raises(ValueError):
            env.step(bad)
    with pytest.raises(ValueError, match="access must be one of"):
        gym.make("hear_gym/Onset-v0", access="T+S")
    with pytest.raises(ValueError, match="split must be one of"):
        gym.make("hear_gym/Onset-v0", split="validation")
    with pytest.raises(ValueError, match="renderings must be among"):
        gym.make("hear_gym/Onset-v0", renderings=["noisy"])
    with pytest.raises(ValueError, match="not an Onset item id"):
        gym.make("hear_gym/Onset-v0", item_ids=["book_uncertainty-00/a/noise99"])
    with pytest.raises(ValueError, match="unknown Onset item"):
        gym.make("hear_gym/Onset-v0", item_ids=["alarm_urgency-00/a/noise15"])  # train: clean only
    with pytest.raises(TypeError):
        gym.make("hear_gym/Onset-v0", feedback="prosody")
    with pytest.raises(KeyError):
        env.reset(options={"item_id": "nope"})
    assert len(ACTIONS) == 6 and "Speak" not in ACTIONS


def test_the_group_cache_holds_a_whole_split():
    """A pass over a split renders each group once: the cache holds the largest split's groups."""
    groups_per_split = Counter(group.split for group in groups_by_id().values())
    assert rendered_group.cache_info().maxsize >= max(groups_per_split.values())


def test_features_measure_each_prefix_once(monkeypatch):
    calls = []
    original = features.prefix_representation
    monkeypatch.setattr(features, "prefix_representation", lambda wave: calls.append(1) or original(wave))
    env = gym.make("hear_gym/Onset-v0", access="A", observation="features")
    first = [obs["acoustic"] for obs, *_ in _play(env, [0] * 5)]
    again = [obs["acoustic"] for obs, *_ in _play(env, [0] * 5)]
    assert len(calls) == 5  # five prefixes; the terminal step and the replay measure nothing
    assert all(np.array_equal(a, b) and a is not b for a, b in zip(first, again, strict=True))
