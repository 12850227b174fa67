"""Text spaces over a large charset share their charset tables with their copies, and behave as
Gymnasium's own: same members, same flattening, independent seeded sampling, and pickling."""

import copy
import pickle

import gymnasium as gym
from gymnasium import spaces

from hear_gym.core.text import SharedCharsetText, shared_text_space
from hear_gym.envs.ambiguity.env import charset

CHARSET = "abc" + "".join(chr(c) for c in range(0x4E00, 0x4E40))


def test_a_shared_space_equals_gymnasiums_own_and_samples_members():
    shared, plain = shared_text_space(12, CHARSET), spaces.Text(12, min_length=1, charset=CHARSET)
    assert shared == plain and isinstance(shared, SharedCharsetText)
    shared.seed(3)
    plain.seed(3)
    samples = [shared.sample() for _ in range(20)]
    assert samples == [plain.sample() for _ in range(20)]
    assert all(shared.contains(s) for s in samples) and not shared.contains("xyz")


def test_copies_share_the_tables_and_not_the_generator():
    first, second = shared_text_space(12, CHARSET), shared_text_space(12, CHARSET)
    deep = copy.deepcopy(first)
    assert first._char_index is second._char_index is deep._char_index
    first.seed(0)
    second.seed(0)
    deep_after = copy.deepcopy(first)
    assert deep_after.np_random is not first.np_random is not second.np_random
    drawn = [first.sample() for _ in range(5)]  # advances first's generator only
    assert [second.sample() for _ in range(5)] == drawn == [deep_after.sample() for _ in range(5)]
    restored = pickle.loads(pickle.dumps(first))
    assert restored == first and restored.sample() == first.sample()


def test_the_ambiguity_env_keeps_its_charset_and_vectorizes():
    env = gym.make("hear_gym/Ambiguity-v0")
    question = env.observation_space["question"]
    assert question._char_str == "".join(sorted(charset()))
    vector = gym.vector.SyncVectorEnv([lambda: gym.make("hear_gym/Ambiguity-v0")] * 2)
    obs, _ = vector.reset(seed=0)
    assert vector.observation_space["question"][0]._char_index is question._char_index
    assert all(vector.single_observation_space["question"].contains(q) for q in obs["question"])
    vector.close()
    env.close()
