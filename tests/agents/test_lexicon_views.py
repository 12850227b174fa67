"""The rule agents' reading of a transcript, kept and extended step by step, is the reading of the
whole transcript afresh."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import hear_gym  # noqa: F401
from agents.hear2act import lexicon
from agents.hear2act.lexicon import DialogueView, Lexicon, domain_named, parse_options


def test_views_read_step_by_step_are_fresh_readings(monkeypatch):
    env = gym.make("hear_gym/Hear2Act-v0", split="dev", max_turns=30)
    draws, transcripts = np.random.default_rng(2), []
    for episode in range(12):
        obs, _ = env.reset(seed=episode)
        transcripts.append(obs["transcript"])
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(int(draws.choice(np.flatnonzero(obs["action_mask"]))))
            transcripts.append(obs["transcript"])
            done = terminated or truncated
    domain = domain_named(env.unwrapped.domain.name)  # the last episode's; every domain reads alike
    reader = Lexicon(domain)
    kept = [DialogueView.parse(t, reader) for t in transcripts]  # each step extends the previous one
    monkeypatch.setattr(lexicon, "_READINGS", {})
    for transcript, view in zip(transcripts, kept, strict=True):
        lexicon._READINGS.clear()  # nothing kept: the whole transcript is read
        assert DialogueView.parse(transcript, reader) == view
    assert any(len(v.stated_needs) >= 2 for v in kept) and any(len(v.recommended) >= 3 for v in kept)


def test_the_option_table_is_the_option_lists_reading_and_read_only():
    env = gym.make("hear_gym/Hear2Act-v0", split="dev")
    obs, _ = env.reset(seed=0)
    reader = Lexicon(domain_named(obs["domain"]))
    options, features = reader.option_table(obs["options"])
    assert options == parse_options(obs["options"])
    assert dict(features) == {o.option_id: reader.features(o.description) for o in options}
    assert reader.option_table(obs["options"])[1] is features
    try:
        features[1]["anything"] = True
    except TypeError:
        pass
    else:
        raise AssertionError("an agent could change every other agent's option table")
