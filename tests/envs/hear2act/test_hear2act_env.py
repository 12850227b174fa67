import gymnasium as gym
import pytest

from hear_gym.envs.hear2act.actions import (
    ASK_GENERAL,
    ASK_SLOT0,
    CLARIFY,
    CONFIRM,
    N_ACTIONS,
    RECOMMEND0,
)

AIRLINE = "budget_airline_tickets-00"


def make(**kwargs):
    kwargs.setdefault("item_ids", [AIRLINE])
    return gym.make("hear_gym/Hear2Act-v0", **kwargs)


def test_reset_plays_the_standardized_opening():
    env = make()
    obs, info = env.reset(seed=0)
    lines = obs["transcript"].splitlines()
    assert len(lines) == 3 and lines[0].startswith("User: I need to fly")
    scenario = env.unwrapped.scenario
    assert f"[OPTION: {scenario.opening_option}]" in lines[1]
    assert obs["turn"] == 1 and obs["current_option"] == scenario.opening_option
    assert info["gold_option"] == scenario.gold_option and len(info["hidden_concerns"]) == 3


def test_ground_truth_stays_out_of_observations():
    for access in ("T", "T+S"):
        env = make(access=access)
        obs, info = env.reset(seed=0)
        flat = " ".join(str(v) for v in obs.values())
        assert "gold" not in flat and "L1" not in flat
        assert ("concern_state" in obs) == (access == "T+S")
        if access == "T+S":
            assert obs["concern_state"] == info["delivery_label"]


def test_confirming_the_gold_after_acceptance_succeeds():
    env = make(access="T+S")
    env.reset(seed=0)
    gold = env.unwrapped.scenario.gold_option
    obs, reward, terminated, truncated, info = env.step(RECOMMEND0 + gold - 1)
    assert not terminated and obs["concern_state"] in {"satisfied", "warm", "enthusiastic", "relieved"}
    obs, reward, terminated, truncated, info = env.step(CONFIRM)
    assert terminated and not truncated and reward == 1.0
    assert info["success"] and info["final_option"] == gold and not info["episode"]["turn_limit"]
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(CONFIRM)


def test_budget_exhaustion_counts_the_last_recommendation():
    """The turn limit is a scored end: terminated, not truncated, so no trainer bootstraps a
    continuation past it; the record says the limit ended it and nothing was confirmed."""
    env = make(max_turns=4)
    env.reset(seed=0)
    gold = env.unwrapped.scenario.gold_option
    env.step(ASK_GENERAL)
    env.step(RECOMMEND0 + gold - 1)
    obs, reward, terminated, truncated, info = env.step(ASK_GENERAL)
    assert terminated and not truncated and obs["turn"] == 4
    assert info["final_option"] == gold and reward == 1.0
    record = info["episode"]
    assert record["turn_limit"] and record["counts"]["premature_closure"] == 0


def test_invalid_actions_are_a_documented_outcome():
    env = make(assistant="spoken", invalid_action_penalty=-0.5)
    obs, _ = env.reset(seed=0)
    assert obs["action_mask"][CLARIFY] == 0
    n_dims = len(obs["attributes"].splitlines())
    assert obs["action_mask"][ASK_SLOT0 : ASK_SLOT0 + n_dims].all()
    for action in (CLARIFY, ASK_SLOT0 + 7) if n_dims < 8 else (CLARIFY,):
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["invalid_action"] and reward == -0.5 and not terminated
        assert info["turn_record"]["action"] == {"kind": "invalid", "option": 0, "attribute": ""}
        assert obs["transcript"].endswith(info["turn_record"]["user_text"])


def test_text_actions():
    env = make(actions="text", access="T+S")
    env.reset(seed=0)
    scenario = env.unwrapped.scenario
    obs, reward, terminated, _, info = env.step("I think you should take option 3.")
    assert "does not start with [ACTION" in info["invalid_action"] and reward < 0
    obs, _, _, _, info = env.step(
        f"[ACTION: RECOMMEND] [OPTION: {scenario.gold_option}] Try this one\u2014it fits!"
    )
    assert info["invalid_action"] is None and info["turn_record"]["action"]["option"] == scenario.gold_option
    assert "Try this one-it fits!" in obs["transcript"]
    obs, _, _, _, info = env.step("[ACTION: ASK] What departure time would suit you?")
    assert info["turn_record"]["action"]["attribute"] == "departure_time"
    obs, reward, terminated, _, info = env.step("[ACTION: CONFIRM] Booking it now.")
    assert terminated and reward == 1.0
    env.reset(seed=0)
    with pytest.raises(TypeError, match="str reply"):
        env.step(3)


def test_bad_kwargs_get_clear_errors():
    with pytest.raises(ValueError, match="feedback must be one of"):
        make(feedback="audio")
    with pytest.raises(ValueError, match="access must be one of"):
        make(access="T+X")
    with pytest.raises(ValueError, match="assistant must be one of"):
        make(assistant="robot")
    with pytest.raises(ValueError, match="max_turns"):
        make(max_turns=2)
    with pytest.raises(ValueError, match="actions must be one of"):
        make(actions="json")
    with pytest.raises(ValueError, match="unknown renderer 'festival'"):
        make(renderer="festival")  # refused under T too, where nothing is rendered
    with pytest.raises(ValueError, match="unknown prosody plan table"):
        make(prosody="loud")
    env = make()
    with pytest.raises(ValueError, match="not among this env's scenarios"):
        env.reset(options={"item_id": "budget_airline_tickets-01"})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"gold": 1})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside Discrete"):
        env.unwrapped.step(N_ACTIONS)


def test_shortest_turn_budget_passes_the_env_checker():
    from gymnasium.utils.env_checker import check_env

    check_env(make(max_turns=3).unwrapped)


def test_render_ansi_shows_the_transcript():
    env = make(render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs["transcript"] + "\n"


def test_every_scenario_fits_the_observation_space():
    env = gym.make("hear_gym/Hear2Act-v0", split="all", access="T+S").unwrapped
    for scenario in env.scenarios:
        obs, _ = env.reset(seed=0, options={"item_id": scenario.scenario_id})
        assert env.observation_space.contains(obs), scenario.scenario_id


def test_long_text_replies_stay_inside_the_transcript_space():
    env = make(actions="text", max_turns=6)
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, *_ = env.step("[ACTION: ASK] " + "Tell me more\u2026\n" * 400)
    assert env.observation_space.contains(obs)
    assert len(obs["transcript"].splitlines()) == 3 + 2 * 5  # line breaks in replies are folded
