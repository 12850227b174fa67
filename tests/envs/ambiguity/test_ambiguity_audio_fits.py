"""Every user turn of the test split fits the 12 s audio buffer (a longer one would be cut, and a
listener would lose its end: where an omission or the repeated question is). Slow: it renders
every turn once."""

import pytest

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.envs.ambiguity.env import AmbiguityEnv
from hear_gym.envs.ambiguity.items.generator import episodes_by_id


@pytest.mark.slow
def test_every_test_turn_fits_the_audio_buffer():
    env = AmbiguityEnv(split="test")
    longest: dict[str, float] = {}
    too_long = []
    seen: set[tuple] = set()
    for episode_id in env.episodes:
        episode = episodes_by_id()[episode_id]
        env.reset(options={"item_id": episode_id})
        for turn in episode.turns:
            key = (episode.language, tuple(u.written for u in turn.said), tuple(u.spoken for u in turn.said))
            if key not in seen:
                seen.add(key)
                samples = len(env.turn_audio()[0])
                longest[episode.row] = max(longest.get(episode.row, 0), samples / 16_000)
                if samples > MAX_AUDIO_SAMPLES:
                    too_long.append((episode_id, samples / 16_000))
            env.step(turn.asked.answer)
    assert not too_long, too_long
    assert set(longest) >= {"phonological", "semantic", "multi_turn"}
