"""What Ambiguity computes once and reuses (no work repeated per step that depends only
on the episode): the view after each sequence of decisions (observation text and arrays, reward,
info), each turn's audio, a transcript's bare form and the feature observation's text bits; and
that reusing them changes nothing a step shows and hands no caller anything another can change."""

import gymnasium as gym
import numpy as np

import hear_gym  # noqa: F401  (registers the ids)
from hear_gym.envs.ambiguity import render
from hear_gym.envs.ambiguity.access import bare_transcript
from hear_gym.envs.ambiguity.features import TRANSCRIPT_BINS, token_bits
from hear_gym.envs.ambiguity.items.generator import episodes_by_id, item_ids

ENV_ID = "hear_gym/Ambiguity-v0"
DIALOGUE = next(
    e for e in item_ids("test") if e.startswith("multi_turn") and len(episodes_by_id()[e].turns) > 3
)
SINGLE = "semantic-en-lexical-test-000"  # one plain turn


def _play(env, actions) -> list:
    """The reset and every step of ``actions`` on the env's one episode."""
    played = [env.reset(seed=0)]
    for action in actions:
        played.append(env.step(action))
    return played


def _assert_same(a, b) -> None:
    """Equal trees, arrays equal in dtype, shape, bytes and writeability."""
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert (a.dtype, a.shape, a.flags.writeable, a.tobytes()) == (
            b.dtype,
            b.shape,
            b.flags.writeable,
            b.tobytes(),
        )
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a == b


def test_a_replayed_dialogue_builds_each_view_once_and_shows_what_a_fresh_env_shows():
    turns = len(episodes_by_id()[DIALOGUE].turns)
    actions = [1, 0, 3, *([0] * (turns - 3))]  # 3: no option of a two-option question (invalid)
    env = gym.make(ENV_ID, access="T", item_ids=[DIALOGUE])
    _play(env, actions)
    replayed = _play(env, actions)
    assert env.unwrapped._views.cache_info().misses == turns + 1  # the reset and each step, once
    fresh = _play(gym.make(ENV_ID, access="T", item_ids=[DIALOGUE]), actions)
    _assert_same(replayed, fresh)
    assert replayed[-1][2] and replayed[-1][4]["episode"]["choices"] == [1, 0, None, *([0] * (turns - 3))]


def test_each_caller_gets_its_own_observation_arrays_and_info():
    env = gym.make(ENV_ID, access="T", item_ids=[SINGLE])
    first = _play(env, [0])
    for _ in range(3):
        (obs, info), (step_obs, _, _, _, step_info) = _play(env, [0])
        obs["turn"][0], obs["action_mask"][:], info["answer"] = 7, 0, -1
        step_obs["transcript"] = "edited"
        step_info["episode"]["choices"].append(2)
        step_info["episode"]["options"][0].clear()
    _assert_same(_play(env, [0]), first)


def test_a_turn_is_rendered_once_and_its_audio_is_shared_read_only(monkeypatch):
    rendered = []
    original = render.render_text

    def counted(*args, **kwargs):
        rendered.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(render, "render_text", counted)
    env = gym.make(ENV_ID, access="A", item_ids=[SINGLE])
    (obs, _), (step_obs, *_) = _play(env, [0])
    obs["audio"][:] = 0.0  # the padded buffer is the caller's own
    (again, _), _ = _play(env, [0])
    assert len(rendered) == 1
    assert again["audio"].any() and np.array_equal(again["audio"], step_obs["audio"])
    wave, _ = env.unwrapped.turn_audio()
    assert not wave.flags.writeable and wave.tobytes() == again["audio"][: len(wave)].tobytes()


def test_a_bare_transcript_drops_the_users_punctuation_only():
    transcript = "User: Let's eat, Grandma.\nAssistant: A) eat, then talk.\nUser: 你好，世界。"
    assert (
        bare_transcript(transcript)
        == "User: Let's eat Grandma\nAssistant: A) eat, then talk.\nUser: 你好世界"
    )


def test_kept_text_bits_are_fresh_bits_and_the_callers_own():
    env = gym.make(ENV_ID, access="T-nopunct", observation="features", item_ids=[SINGLE])
    features, _ = env.reset(seed=0)
    said = episodes_by_id()[SINGLE].turns[0].said[0].written
    expected = token_bits(bare_transcript(f"User: {said}"), TRANSCRIPT_BINS)
    _assert_same(features["transcript"], expected)
    features["transcript"][:] = 7.0
    features["question"][:] = 7.0
    again, _ = env.reset(seed=0)
    _assert_same(again["transcript"], expected)
    assert set(np.unique(again["question"])) == {0.0, 1.0}
