"""Every user turn of every split fits the 12 s audio buffer (a longer one would be cut, and a
listener would lose its end: where an omission or the repeated question is). Slow: it renders
every turn of the suite once in the default voice and renderer, then the longest of them in every
voice and renderer."""

import pytest

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.envs.ambiguity.env import AmbiguityEnv
from hear_gym.envs.ambiguity.items.generator import episodes_by_id
from hear_gym.envs.ambiguity.items.model import SPLITS
from hear_gym.envs.ambiguity.render import REALIZATIONS
from hear_gym.speech.espeak import VOICES

# turns (the longest in the default voice) also rendered in every other voice and renderer: a
# voice's speed differs by text, so the longest turn in one voice is not always the longest in another
LONGEST_CHECKED = 40


def _turn_lengths(env: AmbiguityEnv, item_ids) -> dict[tuple, tuple[tuple[str, int], int]]:
    """Each distinct turn the episodes play (its words and readings) -> ((episode id, turn index),
    samples)."""
    lengths: dict[tuple, tuple[tuple[str, int], int]] = {}
    for episode_id in item_ids:
        episode = episodes_by_id()[episode_id]
        env.reset(options={"item_id": episode_id})
        for number, turn in enumerate(episode.turns):
            key = (episode.language, tuple(u.written for u in turn.said), tuple(u.spoken for u in turn.said))
            if key not in lengths:
                lengths[key] = ((episode_id, number), len(env.turn_audio()[0]))
            env.step(turn.asked.answer)
    return lengths


def _too_long(lengths: dict) -> list[tuple]:
    return [(where, samples / 16_000) for where, samples in lengths.values() if samples > MAX_AUDIO_SAMPLES]


@pytest.mark.slow
def test_every_turn_of_every_split_fits_the_audio_buffer():
    everything: dict[tuple, tuple[tuple, int]] = {}
    for split in SPLITS:
        env = AmbiguityEnv(split=split)
        everything.update(_turn_lengths(env, env.episodes))
    assert not _too_long(everything), _too_long(everything)
    phenomena = {episodes_by_id()[episode_id].phenomenon.value for (episode_id, _), _ in everything.values()}
    assert phenomena >= {"phonological", "semantic", "omission", "coreference", "multi_turn"}

    longest = sorted(everything.values(), key=lambda entry: -entry[1])[:LONGEST_CHECKED]
    by_split: dict[str, list[str]] = {}
    for (episode_id, _), _ in longest:
        by_split.setdefault(episodes_by_id()[episode_id].split, []).append(episode_id)
    too_long = []
    for renderer in REALIZATIONS:
        for voice in VOICES:
            for split, item_ids in by_split.items():
                env = AmbiguityEnv(split=split, voice=voice, renderer=renderer)
                too_long += [(renderer, voice, *t) for t in _too_long(_turn_lengths(env, item_ids))]
    assert not too_long, too_long
