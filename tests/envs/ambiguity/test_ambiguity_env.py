"""Ambiguity-v0's behaviour: what each access condition shows, the strict text grammar and its
invalid outcome, multi-turn dialogues, scoring and clear errors for bad input."""

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.envs.ambiguity.items.generator import all_items, episodes_by_id, item_ids
from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair
from hear_gym.envs.ambiguity.metrics import accuracy

ENV_ID = "hear_gym/Ambiguity-v0"
PAIRS = [i for i in all_items() if isinstance(i, PhonologicalPair) and i.split == "test"]


def _obs(access, episode_id, **kwargs):
    env = gym.make(ENV_ID, access=access, item_ids=[episode_id], **kwargs)
    return env.reset(seed=0, options={"item_id": episode_id})


def _text(obs) -> tuple[str, str]:
    return obs["question"], obs["transcript"]


def test_without_punctuation_a_pairs_readings_look_the_same():
    envs = {
        access: gym.make(ENV_ID, access=access, phenomena=["phonological"]) for access in ("T", "T-nopunct")
    }

    def seen(access, episode_id):
        return _text(envs[access].reset(options={"item_id": episode_id})[0])

    leaks = 0
    for pair in (p for p in PAIRS if p.contrast in AUDIO_DECIDED):
        a, b = (e.episode_id for e in pair.episodes())
        assert seen("T-nopunct", a) == seen("T-nopunct", b), pair.item_id
        leaks += seen("T", a) != seen("T", b)
    # punctuation tells pause and intonation readings apart under T (why T-nopunct exists)
    assert leaks > 0


def test_audio_only_hides_the_users_words_and_keeps_the_question():
    episode_id = next(e for e in item_ids("test") if e.startswith("semantic-en"))
    obs, _ = _obs("A", episode_id, actions="text")
    assert obs["transcript"] == "User: [speech]"
    assert "A) " in obs["question"] and obs["audio_length"][0] > 0


@pytest.mark.parametrize("reply", ["B", "b", "(B)", "B.", " b) "])
def test_a_letter_reply_is_an_option(reply):
    episode_id = next(e for e in item_ids("test") if e.endswith("/detect"))
    env = gym.make(ENV_ID, access="T", actions="text", item_ids=[episode_id])
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(reply)
    assert terminated and info["decision"] == 1 and info["invalid_action"] is None
    assert reward == 0.0  # the gold of a detection episode is "yes" (A)


@pytest.mark.parametrize("reply", ["", "yes", "A because", "Answer: A", "E", "AB"])
def test_anything_else_is_invalid_and_scored_wrong(reply):
    episode_id = next(e for e in item_ids("test") if e.endswith("/detect"))
    env = gym.make(ENV_ID, access="T", actions="text", item_ids=[episode_id])
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(reply)
    assert terminated and reward == 0.0
    assert info["invalid_action"] and info["episode"]["kinds"] == ["invalid"]
    assert not info["episode"]["success"]


def test_a_masked_out_index_is_invalid_not_an_error():
    episode_id = next(e for e in item_ids("test") if e.endswith("/detect"))
    env = gym.make(ENV_ID, access="T", item_ids=[episode_id])
    obs, _ = env.reset(seed=0)
    assert obs["action_mask"].tolist() == [1, 1, 0, 0]
    _, reward, _, _, info = env.step(3)
    assert reward == 0.0 and info["decision_kind"] == "invalid"
    with pytest.raises(ValueError):
        env.reset(seed=0)
        env.step(4)


def test_a_dialogue_pays_on_its_last_turn_and_keeps_the_agents_answers():
    episode_id = next(e for e in item_ids("test") if e.startswith("multi_turn-en"))
    turns = episodes_by_id()[episode_id].turns
    env = gym.make(ENV_ID, access="A", actions="text", item_ids=[episode_id])
    obs, info = env.reset(seed=0)
    rewards = []
    for k, turn in enumerate(turns):
        assert obs["turn"][0] == k and obs["audio_length"][0] > 0
        gold = turn.asked.options[turn.asked.answer]
        obs, reward, terminated, _, info = env.step(f"I think {gold}.")  # free text: the rule judge
        rewards.append(reward)
        assert terminated == (k == len(turns) - 1)
        assert info["decision_kind"] == "judged" and info["correct"]
    assert rewards == [0.0] * (len(turns) - 1) + [1.0]
    record = info["episode"]
    assert record["success"] and record["consistent"] and len(record["choices"]) == len(turns)
    lines = obs["transcript"].split("\n")
    assert all(line == "User: [speech]" for line in lines if line.startswith("User: "))
    assert sum(line.startswith("Assistant: I think") for line in lines) == len(turns)


def test_always_yes_detects_at_chance_because_of_the_controls():
    env = gym.make(ENV_ID, access="T", phenomena=["omission", "coreference"], languages=["zh"])
    records = []
    for episode_id in env.unwrapped.episodes:
        if "/detect" not in episode_id:
            continue
        env.reset(options={"item_id": episode_id})
        records.append(env.step(0)[4]["episode"])
    assert accuracy(records, n_resamples=200).point == pytest.approx(0.5)


def test_bad_input_gets_clear_errors():
    with pytest.raises(ValueError, match="access"):
        gym.make(ENV_ID, access="S")
    with pytest.raises(ValueError, match="phenomena"):
        gym.make(ENV_ID, phenomena=["prosody"])
    with pytest.raises(ValueError, match="unknown Ambiguity episodes"):
        gym.make(ENV_ID, item_ids=["nope"])
    with pytest.raises(ValueError, match="split"):
        gym.make(ENV_ID, split="validation")
    env = gym.make(ENV_ID, access="T", actions="text")
    env.reset(seed=0)
    with pytest.raises(TypeError):
        env.step(1)


def test_mandarin_replies_keep_their_characters():
    episode_id = next(e for e in item_ids("test") if e.startswith("multi_turn-zh"))
    env = gym.make(ENV_ID, access="T", actions="text", item_ids=[episode_id])
    env.reset(seed=0)
    obs = env.step("我觉得选第一个")[0]
    assert "Assistant: 我觉得选第一个" in obs["transcript"]
    assert env.observation_space["transcript"].contains(obs["transcript"])
    assert np.all(obs["action_mask"][:2] == 1)
