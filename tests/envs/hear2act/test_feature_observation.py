"""``observation="features"``: each access condition adds exactly its channel, T hears nothing."""

import gymnasium as gym
import numpy as np
import pytest
from stand_ins import PLUGINS

from hear_gym.envs.hear2act.actions import RECOMMEND0
from hear_gym.envs.hear2act.audio import TurnAudio
from hear_gym.envs.hear2act.features import (
    ACCESS_CHANNELS,
    CHANNELS,
    OPTION_COLUMNS,
    REACTION_KINDS,
    FeatureObservation,
)
from hear_gym.envs.hear2act.scenarios.bank import get_scenario
from hear_gym.envs.hear2act.user.states import ALL_DELIVERY_LABELS

SCENARIO = "budget_airline_tickets-00"
BASE_LEAVES = {"dialogue", "options", "action_mask"}


def make(access="T", **kwargs):
    return gym.make(
        "hear_gym/Hear2Act-v0",
        item_ids=[SCENARIO],
        access=access,
        observation="features",
        **PLUGINS.get(access, {}),
        **kwargs,
    )


def _soft_options():
    """(gold, one reluctantly accepted option) of the scenario: both meet L1, in budget."""
    scenario = get_scenario(SCENARIO)
    reluctant = next(
        c.option_id
        for c in scenario.candidates
        if c.role == "pattern" and c.satisfies[0] and not all(c.satisfies)
    )
    return scenario.gold_option, reluctant


@pytest.mark.parametrize("access", sorted(ACCESS_CHANNELS))
def test_each_access_condition_adds_exactly_its_channel(access):
    env = make(access)
    expected = set(BASE_LEAVES)
    for channel in ACCESS_CHANNELS[access]:
        expected |= set(CHANNELS[channel].spaces)
    assert set(env.observation_space.spaces) == expected
    # SB3's MultiInputPolicy takes a Dict whose leaves are float32 Boxes (no Text spaces).
    assert all(
        isinstance(s, gym.spaces.Box) and s.dtype == np.float32 for s in env.observation_space.spaces.values()
    )
    obs, _ = env.reset(seed=0)
    for action in (RECOMMEND0 + get_scenario(SCENARIO).gold_option - 1, 0):
        assert env.observation_space.contains(obs)
        assert all(np.isfinite(v).all() for v in obs.values())
        obs, *_ = env.step(action)


@pytest.mark.parametrize("access", ["T", "T+S"])
def test_text_conditions_render_no_audio(access, monkeypatch):
    def no_audio(*args, **kwargs):
        raise AssertionError("a transcript condition rendered audio")

    monkeypatch.setattr(TurnAudio, "waveform", no_audio)
    env = make(access)
    env.reset(seed=0)
    for option in range(1, 12):
        env.step(RECOMMEND0 + option - 1)


def _after_recommending(access: str, option: int) -> dict:
    env = make(access)
    env.reset(seed=0)
    obs, *_ = env.step(RECOMMEND0 + option - 1)
    return obs


def test_transcript_features_cannot_tell_genuine_from_reluctant_assent():
    gold, reluctant = _soft_options()
    genuine, hesitant = _after_recommending("T", gold), _after_recommending("T", reluctant)
    assert np.array_equal(genuine["user_words"], hesitant["user_words"])
    kind = REACTION_KINDS[int(np.argmax(genuine["user_words"][: len(REACTION_KINDS)]))]
    assert kind.value == "shared_assent"
    # The state channel is what tells them apart, and the audio channel carries the delivery.
    tagged = [_after_recommending("T+S", o)["concern_state"] for o in (gold, reluctant)]
    assert not np.array_equal(*tagged)
    heard = [_after_recommending("A+T", o)["prosody"] for o in (gold, reluctant)]
    assert not np.array_equal(*heard)


def test_user_words_record_needs_stated_in_words():
    env = make("T")
    obs, _ = env.reset(seed=0)
    scenario, domain = env.unwrapped.scenario, env.unwrapped.domain
    slot = [d.key for d in domain.concern_dimensions].index(scenario.concerns[0].attribute)
    stated = obs["user_words"][len(REACTION_KINDS) : len(REACTION_KINDS) + 8]
    assert stated[slot] == 1.0 and stated.sum() == 1.0  # the opening reaction states L1


def test_options_leaf_reads_the_visible_descriptions():
    env = make("T")
    obs, _ = env.reset(seed=0)
    scenario, domain = env.unwrapped.scenario, env.unwrapped.domain
    slots = [[d.key for d in domain.concern_dimensions].index(c.attribute) for c in scenario.concerns]
    options = obs["options"].reshape(11, OPTION_COLUMNS)
    gold = options[scenario.gold_option - 1]
    assert all(gold[2 + s] == 1.0 for s in slots)
    for cand, row in zip(scenario.candidates, options, strict=True):
        assert row[0] == np.float32(cand.price / scenario.budget.max_price)
        assert [row[2 + s] == 1.0 for s in slots] == list(cand.satisfies)
    n_dims = len(domain.concern_dimensions)
    assert not options[:, 2 + n_dims :].any() and (options[:, 2 : 2 + n_dims] != 0).all()


def test_audio_only_features_hide_the_words():
    obs = _after_recommending("A", _soft_options()[0])
    assert "user_words" not in obs and obs["prosody"][0] > 0.3 and obs["prosody_vs_request"].any()


def test_features_follow_the_state_intervention():
    env = gym.make(
        "hear_gym/Hear2Act-v0",
        item_ids=[SCENARIO],
        access="T+S",
        observation="features",
        state_intervention="all_unresolved",
    )
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(RECOMMEND0 + get_scenario(SCENARIO).gold_option - 1)
    assert ALL_DELIVERY_LABELS[int(np.argmax(obs["concern_state"]))] == "concerned"


def test_option_fit_agrees_with_the_rule_agents_transcript_reading():
    """``option_fit``'s "fits" column is what the rule agents conclude from the transcript with
    the domain lexicon (an independent reader): within the stated budget and meeting every need
    stated in words. The asked column follows the dialogue; the last row repeats the current one."""
    from agents.hear2act.baselines import AskBeforeConfirmAgent
    from agents.hear2act.lexicon import DialogueView
    from hear_gym.envs.hear2act.features import FIT_COLUMNS
    from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES

    checked_needs = 0
    for seed in range(6):
        words = gym.make("hear_gym/Hear2Act-v0", split="train", disable_env_checker=True)
        numbers = gym.make(
            "hear_gym/Hear2Act-v0", split="train", observation="features", disable_env_checker=True
        )
        agent = AskBeforeConfirmAgent()
        agent.reset(seed)
        (obs, _), (features, _) = words.reset(seed=seed), numbers.reset(seed=seed)
        asked: set[int] = set()
        done = False
        while not done:
            action = agent.act(obs)
            view = DialogueView.parse(obs["transcript"], agent.lexicon)
            rows = features["option_fit"].reshape(N_CANDIDATES + 1, FIT_COLUMNS)
            fits = [agent._consistent(o, view) for o in range(1, N_CANDIDATES + 1)]
            assert rows[:N_CANDIDATES, 0].astype(bool).tolist() == fits
            assert {o + 1 for o in np.flatnonzero(rows[:N_CANDIDATES, 2])} == asked
            assert np.array_equal(rows[N_CANDIDATES], rows[int(obs["current_option"]) - 1])
            checked_needs += len(view.stated_needs)
            if action == 0:
                asked.add(int(obs["current_option"]))
            obs, _, terminated, truncated, _ = words.step(action)
            features, *_ = numbers.step(action)
            done = terminated or truncated
    assert checked_needs > 0  # needs were stated, so the column was tested beyond the budget


class _CountedRecord(dict):
    """A turn record that counts how often it is read."""

    reads = 0

    def __getitem__(self, key):
        self.reads += 1
        return super().__getitem__(key)


def _feature_wrapper(env):
    while not isinstance(env, FeatureObservation):
        env = env.env
    return env


def _play_long(env, steps=30):
    """Observations of random valid steps of one long episode."""
    env.reset(seed=0)
    draws = np.random.default_rng(0)
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(
            int(draws.choice(np.flatnonzero(env.unwrapped.action_masks())))
        )
        yield obs
        if terminated or truncated:
            return


def test_features_read_each_turn_once(monkeypatch):
    """A step reads only the turns added since the last one (every turn at every step made a
    long episode quadratic): an old turn is not read again until the episode ends."""
    env = make(max_turns=40)
    record = env.unwrapped._record
    monkeypatch.setattr(env.unwrapped, "_record", lambda *a, **k: _CountedRecord(record(*a, **k)))
    reads = []
    for _ in _play_long(env, steps=12):
        reads.append(env.unwrapped.turns[2].reads)
    assert len(reads) == 12  # the episode has not ended: no end-of-episode summary read them
    assert reads[3] == reads[-1]


def test_running_totals_match_a_fresh_reading():
    env = make(max_turns=40)
    for obs in _play_long(env):
        fresh = FeatureObservation(_feature_wrapper(env).env, "T", lambda: None)
        expected = fresh.observation(env.unwrapped._observation())
        assert obs.keys() == expected.keys() and all(np.array_equal(obs[k], expected[k]) for k in obs)


def test_features_kept_across_episodes_match_a_fresh_reading():
    """What the features keep between steps (the episode's templates, option_fit's columns per
    set of needs, per scenario id) carries nothing from one episode, or one twin, into the
    next: after many episodes every observation equals a reading by a new wrapper."""
    env = gym.make(
        "hear_gym/Hear2Act-v0",
        item_ids=[SCENARIO, "budget_airline_tickets-01"],
        hidden_users="resample",
        observation="features",
    )
    wrapper, draws = _feature_wrapper(env), np.random.default_rng(1)
    env.reset(seed=1)
    for _ in range(150):
        obs, _, terminated, truncated, _ = env.step(
            int(draws.choice(np.flatnonzero(env.unwrapped.action_masks())))
        )
        fresh = FeatureObservation(wrapper.env, "T", lambda: None)
        expected = fresh.observation(env.unwrapped._observation())
        assert obs.keys() == expected.keys() and all(np.array_equal(obs[k], expected[k]) for k in obs)
        if terminated or truncated:
            env.reset()


def _heard_turns(access: str, steps: int = 12) -> list[dict]:
    env, draws, seen = make(access), np.random.default_rng(4), []
    obs, _ = env.reset(seed=4)
    seen.append(obs)
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(int(draws.choice(np.flatnonzero(obs["action_mask"]))))
        seen.append(obs)
        if terminated or truncated:
            obs, _ = env.reset(seed=5)
            seen.append(obs)
    return seen


@pytest.mark.parametrize("access", ["A", "A+T"])
def test_measured_turns_need_no_audio(access, monkeypatch, tmp_path):
    """Features stored for a turn (as ``hear-gym render --turns all --no-audio`` leaves them) are
    read by its render request: the feature observation then renders nothing and reads no audio,
    and its observations are those measured from the audio."""
    from hear_gym.speech import cache, features

    monkeypatch.setenv("HEAR_GYM_CACHE", str(tmp_path))  # a store of this test's own
    features._CACHE.clear()  # rows other tests left in this process's memory
    measured = _heard_turns(access)  # renders and measures each new turn, storing its features
    features._CACHE.clear()  # a new process: nothing in memory, the stores on disk
    monkeypatch.setattr(cache, "_SHARED", {})

    def no_audio(*args, **kwargs):
        raise AssertionError("audio was rendered or read for a measured turn")

    monkeypatch.setattr(cache.RenderCache, "waveform", no_audio)
    again = _heard_turns(access)
    assert len(again) == len(measured)
    for a, b in zip(measured, again, strict=True):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
