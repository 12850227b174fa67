"""Twin users: ``hidden_users="resample"`` draws a consistent hidden user at every reset (seeded,
the visible world unchanged, the gold spread over the L1-feasible options), and the reset option
``hidden_user`` replays a given twin."""

from __future__ import annotations

import gymnasium as gym
import pytest

import hear_gym  # noqa: F401
from hear_gym.envs.hear2act import scenario_facts
from hear_gym.envs.hear2act.scenario_facts import options_text
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenarios_for
from hear_gym.envs.hear2act.scenarios.twins import HiddenUser, consistent_pairs, public_matrix, twin_scenario
from hear_gym.envs.hear2act.user.engine import UserEngine

SCENARIO = scenarios_for("train")[0].scenario_id


def _make(**kwargs):
    return gym.make("hear_gym/Hear2Act-v0", disable_env_checker=True, **kwargs)


def _feasible(scenario_id: str) -> set[int]:
    scenario, matrix = get_scenario(scenario_id), public_matrix(scenario_id)
    l1 = scenario.concerns[0].attribute
    return {
        c.option_id
        for c in scenario.candidates
        if c.price <= scenario.budget.max_price and matrix[c.option_id][l1]
    }


def test_consistent_pairs_hold_the_own_user_and_cover_every_feasible_gold():
    for scenario in scenarios_for("train")[:24]:
        pairs = consistent_pairs(scenario.scenario_id)
        own = (scenario.concerns[1].attribute, scenario.concerns[2].attribute)
        assert own in pairs and len(pairs) in (5, 10)
        golds = set()
        for l2, l3 in pairs:
            twin = twin_scenario(scenario.scenario_id, HiddenUser(l2, "r2", l3, "r3"))
            assert twin.concerns[0] == scenario.concerns[0] and options_text(twin) == options_text(scenario)
            golds.add(twin.gold_option)
        assert golds == _feasible(scenario.scenario_id)


def test_resampled_users_are_seeded_and_keep_the_visible_world():
    env = _make(hidden_users="resample", item_ids=[SCENARIO])
    bank = get_scenario(SCENARIO)
    golds, users = set(), []
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        assert obs["options"] == options_text(bank) and obs["transcript"].startswith(f"User: {bank.request}")
        assert info["hidden_concerns"][0] == bank.concerns[0].model_dump()
        golds.add(info["gold_option"])
        users.append(info["hidden_concerns"])
    assert golds == _feasible(SCENARIO)  # the option list no longer tells the gold
    again = _make(hidden_users="resample", item_ids=[SCENARIO])
    assert [again.reset(seed=seed)[1]["hidden_concerns"] for seed in range(40)] == users
    bank_env = _make(item_ids=[SCENARIO])
    assert {bank_env.reset(seed=seed)[1]["gold_option"] for seed in range(10)} == {bank.gold_option}


def test_the_hidden_user_reset_option_replays_a_twin():
    bank = get_scenario(SCENARIO)
    l2, l3 = next(
        p for p in consistent_pairs(SCENARIO) if p != (bank.concerns[1].attribute, bank.concerns[2].attribute)
    )
    twin = twin_scenario(SCENARIO, HiddenUser(l2, "needs it", l3, "would like it"))
    env = _make(split="all")
    user = {"l2": l2, "l2_requirement": "needs it", "l3": l3, "l3_requirement": "would like it"}
    _, info = env.reset(seed=3, options={"item_id": SCENARIO, "hidden_user": user})
    assert info["gold_option"] == twin.gold_option
    assert info["hidden_concerns"] == [c.model_dump() for c in twin.concerns]
    _, info = env.reset(seed=3, options={"item_id": SCENARIO, "hidden_user": HiddenUser(**user)})
    assert info["gold_option"] == twin.gold_option


def test_bad_hidden_user_settings_are_refused():
    with pytest.raises(ValueError, match="hidden_users must be one of"):
        _make(hidden_users="shuffle")
    env = _make(split="all")
    with pytest.raises(ValueError, match="hidden_user must be a HiddenUser or a dict"):
        env.reset(options={"item_id": SCENARIO, "hidden_user": {"l2": "x"}})
    with pytest.raises(ValueError, match="not a consistent twin"):
        env.reset(options={"item_id": SCENARIO, "hidden_user": HiddenUser("a", "b", "c", "d")})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"user": {}})


def test_a_scenarios_facts_are_built_once_and_each_twin_keeps_its_own(monkeypatch):
    """A reset of a scenario seen before builds no user engine; the bank scenario and its twin,
    alternating, each play against their own user."""
    built = []
    monkeypatch.setattr(scenario_facts, "_SHARED", {})  # facts other tests' envs left in this process
    original = UserEngine.__post_init__
    monkeypatch.setattr(UserEngine, "__post_init__", lambda engine: built.append(engine) or original(engine))
    bank = get_scenario(SCENARIO)
    l2, l3 = next(
        p for p in consistent_pairs(SCENARIO) if p != (bank.concerns[1].attribute, bank.concerns[2].attribute)
    )
    user = {"l2": l2, "l2_requirement": "needs it", "l3": l3, "l3_requirement": "would like it"}
    env = _make(split="all")
    for hidden in (None, user, None, user):
        options = {"item_id": SCENARIO, **({"hidden_user": user} if hidden else {})}
        _, info = env.reset(seed=3, options=options)
        assert (
            env.unwrapped._engine.scenario.concerns
            == (twin_scenario(SCENARIO, HiddenUser(**user)) if hidden else bank).concerns
        )
    assert len(built) == 2
