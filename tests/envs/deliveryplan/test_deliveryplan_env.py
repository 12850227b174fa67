"""The env plays one case in two steps and scores the pair on the agent's own plans; access
conditions show and hide what they should."""

import gymnasium as gym
import numpy as np
import pytest

import hear_gym  # noqa: F401
from agents.deliveryplan.baselines import OracleAgent, PriorOnlyAgent
from hear_gym.core.env_checks import EpisodeNotRunning
from hear_gym.envs.deliveryplan.cases import cases_by_id
from hear_gym.envs.deliveryplan.display import CUE_ID

ENV_ID = "hear_gym/DeliveryPlan-v0"


def _play(env, agent, case_id):
    obs, info = env.reset(seed=0, options={"item_id": case_id})
    agent.reset()
    rewards = []
    for step in range(2):
        assert obs["step"][0] == step and info["step_index"] == step
        obs, reward, done, truncated, info = env.step(agent.act(obs))
        rewards.append(reward)
        assert done == (step == 1) and not truncated
    return rewards, info


def test_oracle_earns_full_reward_and_consistency():
    env = gym.make(ENV_ID, actions="text", split="all")
    rewards, info = _play(env, OracleAgent(), "vr-050")
    assert rewards == [1.0, 1.0]
    assert info["pair_scores"]["counterfactual_consistency"] == 1.0
    record = info["episode"]
    assert record["return"] == 2.0 and record["item_id"] == "vr-050"
    assert record["source_key"] != record["edited_key"]


def test_step_one_shows_the_edited_case_with_only_the_source_record_changed():
    """Cue ids left out, the two sides differ in one line: the source record's, in its place."""
    env = gym.make(ENV_ID, actions="text", split="all")
    obs, info = env.reset(seed=0, options={"item_id": "vr-020"})
    first = CUE_ID.sub("", obs["text"]).splitlines()
    source_line = first.index(next(line for line in first if "intensity" in line and "Kids" in line))
    obs, *_, info = env.step(OracleAgent().act(obs))
    second = CUE_ID.sub("", obs["text"]).splitlines()
    assert [i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b] == [source_line]
    assert info["source_key"] == "{}/{}".format(*cases_by_id()["vr-020"].edited.source_key)


def test_malformed_reply_uses_the_step_and_scores_zero():
    env = gym.make(ENV_ID, actions="text", split="all")
    env.reset(seed=0, options={"item_id": "vr-001"})
    _, reward, done, _, info = env.step("I would say it warmly.")
    assert reward == 0.0 and info["malformed"] and not done
    _, reward, done, _, info = env.step("{}")
    assert done and info["episode"]["malformed"] == [True, True]
    assert info["pair_scores"]["counterfactual_consistency"] == 0.0


def test_reward_options():
    env = gym.make(ENV_ID, actions="text", split="all", reward="counterfactual_consistency")
    rewards, _ = _play(env, OracleAgent(), "vr-010")
    assert rewards == [0.0, 1.0]
    env = gym.make(ENV_ID, actions="text", split="all", reward="plan_slot_accuracy")
    agent = PriorOnlyAgent()  # cites nothing: Gcite would be 0, plan-slot is not
    rewards, _ = _play(env, agent, "vr-010")
    assert min(rewards) > 0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"access": "S"}, "access"),
        ({"actions": "json"}, "actions"),
        ({"reward": "bleu"}, "reward"),
        ({"partition": "random"}, "partition"),
        ({"split": "holdout"}, "split"),
        ({"item_ids": ["vr-100"]}, "unknown"),
    ],
)
def test_bad_kwargs_get_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(ENV_ID, **kwargs)


def test_partition_chooses_the_cases():
    env = gym.make(ENV_ID, split="test", partition="source_emotion_disjoint")
    assert len(env.unwrapped.episodes) == 32


def test_audio_only_hides_labels_but_keeps_cue_ids():
    env = gym.make(ENV_ID, access="A", split="all")
    obs, info = env.reset(seed=0, options={"item_id": "vr-030"})
    emotion, intensity = cases_by_id()["vr-030"].original.source_key
    assert f"[{info['decisive_cue']}]" in obs["text"]
    assert emotion not in obs["text"] and "intensity" not in obs["text"]
    assert obs["audio_length"][0] > 8000 and np.abs(obs["audio"]).max() > 0


def test_feature_words_carry_the_label_under_t_only():
    """The original and edited sides differ only in the source label: their recording bags
    differ under T and are identical under A (where the acoustic features must tell them
    apart); the other words are the same on both sides."""
    for access, differ in (("T", True), ("A", False)):
        env = gym.make(ENV_ID, access=access, actions="discrete", observation="features", split="all")
        first, _ = env.reset(seed=0, options={"item_id": "vr-030"})
        second, *_ = env.step(0)
        assert np.array_equal(first["words"], second["words"])
        assert (not np.array_equal(first["recordings"], second["recordings"])) == differ
        assert ("acoustic" in first) == (access == "A")


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
def test_typed_actions_pass_the_env_checker_and_replay_the_same():
    """The typed format is not among the family's declared formats (the shared contract tests
    play ints or replies), so it is checked here."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ENV_ID, actions="typed", split="test")
    check_env(env.unwrapped)
    check_env(env)

    def trace(seed):
        env.action_space.seed(seed)
        env.reset(seed=seed)
        out = []
        for _ in range(6):
            _, reward, done, _, info = env.step(env.action_space.sample())
            out.append((info["item_id"], reward))
            if done:
                env.reset()
        return out

    assert trace(3) == trace(3) and trace(3) != trace(4)
    with pytest.raises(EpisodeNotRunning):
        env.reset(seed=0)
        env.step(env.action_space.sample())
        env.step(env.action_space.sample())
        env.step(env.action_space.sample())


def test_cue_ids_and_order_are_drawn_per_episode_from_the_seed():
    env = gym.make(ENV_ID, actions="text", split="all")

    def shown(seed):
        obs, info = env.reset(seed=seed, options={"item_id": "vr-030"})
        return obs["text"], info["cue_ids"], info["decisive_cue"]

    assert shown(3) == shown(3)
    texts = {shown(seed)[0] for seed in range(20)}
    assert len(texts) == 20  # the same case, shown 20 ways
    text, ids, decisive = shown(3)
    edited, *_, info = env.step(OracleAgent().act(env.reset(seed=3, options={"item_id": "vr-030"})[0]))
    # every record gets a new id on the edit: no id says which record changed
    assert info["decisive_cue"] != decisive and not set(info["cue_ids"]) & set(ids)
