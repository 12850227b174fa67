"""Rules every registered env keeps, whatever its family, access condition or action format: no
step after the episode ended (and the return never changes), no non-finite numeric option, and a
failed reset leaves the env as it was."""

import inspect
import json
import math

import gymnasium as gym
import numpy as np
import pytest
from stand_ins import PLUGINS

from hear_gym.core.env_checks import EpisodeNotRunning, require_finite
from hear_gym.core.registry import env_ids, family

MALFORMED_REPLY = "this reply names no action"


def _access(env_id: str) -> str:
    """A text-only access condition where the family has one (nothing to render)."""
    conditions = family(env_id).access_conditions
    return "T" if "T" in conditions else conditions[0]


def _make(env_id: str, actions: str = "discrete", **kwargs) -> gym.Env:
    access = _access(env_id)
    return gym.make(env_id, access=access, actions=actions, split="test", **PLUGINS.get(access, {}), **kwargs)


def _state(env: gym.Env) -> str:
    """Everything the base env holds, its generator's state included."""
    base = env.unwrapped
    return json.dumps({**vars(base), "rng": base.np_random.bit_generator.state}, default=repr, sort_keys=True)


def _play_to_the_end(env: gym.Env, actions: str, seed: int) -> dict:
    """Plays one episode (masked random actions, or malformed replies) to its end; its record."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    while True:
        if actions == "text":
            action = MALFORMED_REPLY
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["episode"]


def _after_the_end(env: gym.Env, actions: str) -> list:
    if actions == "text":
        env.action_space.seed(0)
        return [MALFORMED_REPLY, env.action_space.sample()]
    return list(range(env.action_space.n))


FORMATS = [(env_id, actions) for env_id in env_ids() for actions in family(env_id).action_formats]


@pytest.mark.parametrize("env_id,actions", FORMATS)
def test_no_step_after_the_end_of_an_episode(env_id, actions):
    env = _make(env_id, actions)
    for seed in range(3):
        record = _play_to_the_end(env, actions, seed)
        before = _state(env)
        for action in _after_the_end(env, actions):
            with pytest.raises(EpisodeNotRunning, match="has ended"):
                env.step(action)
        assert _state(env) == before  # nothing scored, counted or drawn
        assert json.loads(json.dumps(record)) == record  # the finished record stands as returned
    env.reset(seed=0)
    env.step(_after_the_end(env, actions)[0])  # a new episode plays


def test_hear2act_text_after_a_confirmed_ending_scores_nothing():
    env = _make("hear_gym/Hear2Act-v0", "text")
    env.reset(seed=0)
    gold = env.unwrapped.scenario.gold_option
    env.step(f"[ACTION: RECOMMEND] [OPTION: {gold}] This one fits.")
    _, reward, terminated, _, info = env.step("[ACTION: CONFIRM] Done.")
    assert terminated and reward == info["episode"]["return"] == 1.0
    for reply in (MALFORMED_REPLY, "[ACTION: CONFIRM] Done."):
        with pytest.raises(EpisodeNotRunning):
            env.step(reply)
    assert env.unwrapped.episode_return == 1.0


def _numeric_options(env_id: str) -> list[str]:
    """The base env's arguments that take numbers (by default value or annotation)."""
    base = type(_make(env_id).unwrapped)
    return [
        name
        for name, p in inspect.signature(base.__init__).parameters.items()
        if (isinstance(p.default, (int, float)) and not isinstance(p.default, bool))
        or any(word in str(p.annotation).replace("|", " ").split() for word in ("int", "float"))
    ]


NUMERIC = [(env_id, name) for env_id in env_ids() for name in _numeric_options(env_id)]


def test_the_numeric_options_are_found():
    assert {name for env_id, name in NUMERIC if env_id == "hear_gym/Hear2Act-v0"} >= {
        "turn_cost",
        "invalid_action_penalty",
        "max_turns",
        "patience",
    }


@pytest.mark.parametrize("env_id,option", NUMERIC)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float32("nan")])
def test_non_finite_numeric_options_are_refused(env_id, option, value):
    with pytest.raises(ValueError, match=f"{option} must be a finite number"):
        _make(env_id, **{option: value})


def test_non_finite_numbers_are_found_inside_options():
    require_finite({"weights": [1, 2.5, {"a": -3}], "flag": True, "name": "nan"})
    with pytest.raises(ValueError, match=r"weights\[1\]\['a'\] must be a finite number"):
        require_finite({"weights": [1, {"a": math.inf}]})


def test_non_finite_turn_cost_is_a_one_line_cli_error(tmp_path):
    from typer.testing import CliRunner

    from hear_gym.cli.app import app

    for value in ("NaN", "Infinity"):
        result = CliRunner().invoke(
            app,
            ["eval", "--out", str(tmp_path / value), "--env", "hear_gym/Hear2Act-v0", "--option"]
            + [f"turn_cost={value}", "--limit", "1", "--cell", "random@T", "--no-progress"],
        )
        assert result.exit_code != 0 and "turn_cost must be a finite number" in result.output
        assert "Traceback" not in result.output and not (tmp_path / value).exists()


BAD_RESETS = {
    "hear2act": [
        {"item_id": "<other>", "hidden_user": {"l2": "nope", "l3": "nope"}},
        {"item_id": "<other>", "hidden_user": {"bogus": 1}},
        {"hidden_user": {"l2": "nope", "l3": "nope"}},
        {"item_id": "no-such-scenario"},
        {"item_id": "<other>", "scenario_id": "<other>"},
        {"seed_me": 1},
    ],
    "voicegate": [{"index": 1.9}, {"index": True}, {"index": 10**6}, {"item_id": "nope"}, {"seed_me": 1}],
    "onset": [{"index": 1.9}, {"index": np.True_}, {"index": -1}, {"item_id": "nope"}, {"seed_me": 1}],
    "deliveryplan": [
        {"index": 1.9},
        {"index": True},
        {"index": 10**6},
        {"item_id": "vr-999"},
        {"seed_me": 1},
    ],
    "ambiguity": [{"index": 1.9}, {"index": True}, {"index": 10**6}, {"item_id": "nope"}, {"seed_me": 1}],
}


@pytest.mark.parametrize("env_id", env_ids())
def test_a_failed_reset_leaves_the_env_as_it_was(env_id):
    env_family = family(env_id)
    env = _make(env_id)
    obs, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    before = _state(env)
    playing = info["item_id"]
    other = next(i for i in env_family.item_ids("test") if i != playing)
    for bad in BAD_RESETS[env_family.name]:
        options = {k: other if v == "<other>" else v for k, v in bad.items()}
        with pytest.raises((ValueError, KeyError, IndexError)):
            env.reset(seed=123, options=options)
        assert _state(env) == before, options
    assert env.unwrapped.np_random.bit_generator.state == json.loads(before)["rng"]
