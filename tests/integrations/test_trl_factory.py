"""TRL ``environment_factory`` classes (``hear_gym.integrations.trl``): every registered family's
class plays through its tools exactly as in-process play does, bad calls get the env's invalid
outcome, unfinished episodes are played out, and rows fix the start state."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from hear_gym.core.registry import env_ids, family
from hear_gym.core.tools import ActionTool, ToolParam, ToolSet, generic_tools
from hear_gym.integrations.trl import (
    NOT_PLAYED,
    environment_factories,
    environment_factory,
    episode_rows,
    tool_set,
)

HEAR2ACT, VOICEGATE, ONSET = "hear_gym/Hear2Act-v0", "hear_gym/VoiceGate-v0", "hear_gym/Onset-v0"
H2A_OPTIONS = {"feedback": "explicit", "reward": "tiered", "turn_cost": 0.05}


def in_process(env_id: str, row: dict, actions: str, access: str, **options):
    """The family's own env for the row's episode and seed, reset: what the factory must match."""
    env_family = family(env_id)
    env = env_family.make(
        access=access, actions=actions, **env_family.episode_kwargs([row["item_id"]]), **options
    )
    observation, info = env.reset(seed=row["seed"], options=env_family.reset_options(row["item_id"]))
    return env, info


def play(env, actions) -> tuple[float, bool, dict]:
    total, done, info = 0.0, False, {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        done = terminated or truncated
        if done:
            break
    return total, done, info


@pytest.mark.parametrize("env_id", env_ids())
def test_every_family_plays_through_its_tools_as_in_process_text_play(env_id):
    """Random calls (arguments that fit and that do not) against the family's text env stepped
    with the same replies, from the same row: same return, same end. Picks up new families."""
    environment = environment_factory(env_id)()
    row = episode_rows(env_id, split=family(env_id).splits[0], n=1, seed=3)[0]
    first = environment.reset(**row)
    assert first == environment_factory(env_id)().reset(**row)  # the row fixes the start
    words = [*first.split()[:20], "", "7"]
    rng = np.random.default_rng(0)
    tools = tool_set(env_id).tools
    for _ in range(12):
        if environment.done:
            break
        tool = tools[int(rng.integers(len(tools)))]
        arguments = {
            p.name: int(rng.integers(0, 13)) if p.kind is int else str(rng.choice(words))
            for p in tool.params
            if p.required or rng.random() < 0.5
        }
        result = getattr(environment, tool.name)(**arguments)
        assert isinstance(result, str)
    reward = environment.get_reward()  # unfinished: played out with malformed replies
    assert environment.done
    env, _ = in_process(env_id, row, "text", tool_set(env_id).text_access)
    total, done, info = play(env, environment.replies)
    assert done and total == pytest.approx(reward, abs=1e-12)
    assert info["episode"].get("return", total) == pytest.approx(reward, abs=1e-12)  # where it records one


def test_hear2act_tools_play_the_same_turns_as_discrete_actions():
    from hear_gym.envs.hear2act.actions import ASK_GENERAL, ASK_SLOT0, CLARIFY, CONFIRM, RECOMMEND0

    row = episode_rows(HEAR2ACT, n=1, seed=1)[0]
    env, info = in_process(HEAR2ACT, row, "discrete", "T", **H2A_OPTIONS)
    gold, label = info["gold_option"], env.unwrapped.domain.concern_dimensions[1].label
    total, done, discrete_info = play(
        env, [ASK_GENERAL, ASK_SLOT0 + 1, CLARIFY, RECOMMEND0 + gold - 1, CONFIRM, CONFIRM]
    )
    environment = environment_factory(HEAR2ACT, **H2A_OPTIONS)()
    environment.reset(**row)
    environment.ask()
    environment.ask_about(attribute=label.upper())  # labels match in any case
    environment.clarify()
    environment.recommend(option=gold)
    environment.confirm()
    if not environment.done:
        environment.confirm()
    assert done and environment.done and environment.invalid_calls == 0
    assert environment.get_reward() == pytest.approx(total, abs=1e-12)
    turns = [(t["action"], t["user_text"]) for t in environment.episode["turns"]]
    assert turns == [(t["action"], t["user_text"]) for t in discrete_info["episode"]["turns"]]


def test_voicegate_and_onset_tools_score_as_their_discrete_actions():
    from hear_gym.envs.voicegate.actions import MUTE, TOOL0
    from hear_gym.envs.voicegate.items.pools import TOOL_NAMES

    for row in episode_rows(VOICEGATE, n=4, seed=0):
        for tool, index in (("mute", MUTE), ("unlock_door", TOOL0 + TOOL_NAMES.index("unlock_door"))):
            environment = environment_factory(VOICEGATE)()
            environment.reset(**row)
            getattr(environment, tool)(**({"door": "front"} if tool == "unlock_door" else {}))
            assert environment.done
            expected, _, _ = play(in_process(VOICEGATE, row, "discrete", "T")[0], [index])
            assert environment.get_reward() == expected
    from hear_gym.envs.onset.actions import ACTIONS

    row = episode_rows(ONSET, n=1, seed=0)[0]
    environment = environment_factory(ONSET)()
    environment.reset(**row)
    calls = [("wait", {}), ("wait", {}), ("act", {"action": "Call-Tool"}), ("act", {"action": "think"})]
    calls += [("act", {"action": "Abstain"})]
    for name, arguments in calls:
        environment.__getattribute__(name)(**arguments)
    labels = ["Wait", "Wait", "Call-Tool", "Think", "Abstain"]
    expected, done, _ = play(in_process(ONSET, row, "discrete", "T")[0], [ACTIONS.index(x) for x in labels])
    assert done and environment.done and environment.get_reward() == expected


def test_bad_calls_get_the_envs_invalid_outcome_and_say_why():
    row = episode_rows(HEAR2ACT, n=1, seed=1)[0]
    environment = environment_factory(HEAR2ACT, **H2A_OPTIONS)()
    environment.reset(**row)
    penalty = -0.1 - H2A_OPTIONS["turn_cost"]  # the env's invalid_action_penalty, then the turn cost
    bad_calls = [
        ("ask_about", {"attribute": "colour of the moon"}, "not one of this domain's attributes"),
        ("recommend", {"option": "3"}, "must be a int"),
        ("recommend", {"option": 3, "why": "x"}, "unknown ['why']"),
        ("recommend", {}, "missing ['option']"),
        ("recommend", {"option": True}, "must be a int"),
    ]
    for name, arguments, reason in bad_calls:
        before = environment.episode_return
        result = getattr(environment, name)(**arguments)
        assert result.startswith("Invalid call:") and reason in result
        assert environment.episode_return - before == pytest.approx(penalty)
    before = environment.episode_return
    environment.recommend(option=99)  # fits the signature; the P6a parser refuses it
    assert environment.episode_return - before == pytest.approx(penalty)
    turns = environment._env.unwrapped.turns[1:]
    assert [t["invalid_action"] is not None for t in turns[1:]] == [True] * 6
    assert environment.invalid_calls == 5

    voicegate = environment_factory(VOICEGATE)()
    voicegate.reset(**episode_rows(VOICEGATE, n=1)[0])
    voicegate.unlock_door(door=5)  # wrong type: the empty reply, which the parser calls malformed
    assert voicegate.done and voicegate.episode["outcome"]["action"]["kind"] == "malformed"
    assert voicegate.mute() == NOT_PLAYED and len(voicegate.replies) == 1  # after the end: not played
    with pytest.raises(RuntimeError, match="before reset"):
        environment_factory(ONSET)().wait()


def test_an_unfinished_episode_is_played_out_with_malformed_replies():
    from hear_gym.envs.onset.env import REWARDS

    row = episode_rows(ONSET, n=1, seed=0)[0]
    environment = environment_factory(ONSET)()
    environment.reset(**row)
    environment.wait()
    paid = environment.episode_return
    reward = environment.get_reward()  # four prefixes left, each an invalid decision
    assert reward == pytest.approx(paid + 4 * REWARDS["invalid"])
    assert environment.replies == ["Wait", "", "", "", ""]


def test_tools_are_the_public_methods_with_schemas_trl_can_render():
    from transformers.utils import get_json_schema

    for env_id in env_ids():
        cls = environment_factory(env_id)
        public = {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}
        assert public == {t.name for t in tool_set(env_id).tools} | {"reset", "get_reward"}
        for tool in tool_set(env_id).tools:
            schema = get_json_schema(getattr(cls(), tool.name))["function"]
            assert schema["name"] == tool.name and schema["description"] == tool.description
            assert set(schema["parameters"].get("properties", {})) == {p.name for p in tool.params}
    names = {n for n, _ in inspect.getmembers(environment_factory(HEAR2ACT), inspect.isfunction)}
    assert {"ask", "ask_about", "clarify", "recommend", "confirm"} <= names
    assert {"mute", "answer", "unlock_door", "transfer_money"} <= set(dir(environment_factory(VOICEGATE)))
    assert set(environment_factories()) == {family(e).name for e in env_ids()}


def test_a_family_without_a_tool_set_gets_the_generic_act_tool(monkeypatch):
    from dataclasses import replace

    import hear_gym.integrations.trl as trl_module

    onset = family(ONSET)
    monkeypatch.setattr(trl_module, "family", lambda env_id: replace(onset, tools=None))
    environment = trl_module.environment_factory(ONSET)()
    assert [t.name for t in trl_module.tool_set(ONSET).tools] == ["act"]
    environment.reset(**episode_rows(ONSET, n=1)[0])
    environment.act(reply="Wait")
    assert "Invalid call" in environment.act()  # missing argument: the empty reply, the invalid decision
    assert environment.replies == ["Wait", ""]
    assert generic_tools("x", ("A", "A+T")).text_access == "A"


def test_rows_fix_the_start_state_and_bad_tool_sets_are_refused():
    rows = episode_rows(HEAR2ACT, n=3, seed=5)
    assert rows == episode_rows(HEAR2ACT, n=3, seed=5) and len({r["item_id"] for r in rows}) == 3
    assert episode_rows(HEAR2ACT, ["x"], routed=True)[0]["environment"] == "hear2act"
    a, b = environment_factory(HEAR2ACT)(), environment_factory(HEAR2ACT)()
    assert a.reset(**rows[0]) == b.reset(**rows[0]) != b.reset(**rows[1])
    with pytest.raises(ValueError, match="must not set"):
        environment_factory(HEAR2ACT, actions="discrete")
    with pytest.raises(ValueError, match="access must be one of"):
        environment_factory(HEAR2ACT, access="Z")
    with pytest.raises(ValueError, match="reserved"):
        ToolSet((ActionTool("reset", "x", lambda env: ""),), "", "x")
    with pytest.raises(TypeError, match="kind"):
        ToolParam("x", float, "x")


def test_a_row_can_name_a_twin_user_and_the_seed_fixes_a_resampled_one():
    from dataclasses import asdict

    from hear_gym.envs.hear2act.scenarios.twins import draw_user

    row = episode_rows(HEAR2ACT, n=1, seed=1)[0]
    twin = asdict(draw_user(row["item_id"], np.random.default_rng(7)))
    environment = environment_factory(HEAR2ACT, **H2A_OPTIONS)()
    environment.reset(**row, reset_options={"hidden_user": twin})
    env, _ = in_process(HEAR2ACT, row, "text", "T", **H2A_OPTIONS)
    env.reset(seed=row["seed"], options={"item_id": row["item_id"], "hidden_user": twin})
    assert environment._env.unwrapped.scenario == env.unwrapped.scenario
    assert environment._env.unwrapped.scenario.concerns[1].attribute == twin["l2"]

    def drawn_user(seed: int):
        resampled = environment_factory(HEAR2ACT, hidden_users="resample", **H2A_OPTIONS)()
        resampled.reset(**{**row, "seed": seed})
        return resampled._env.unwrapped.scenario.concerns

    assert drawn_user(0) == drawn_user(0)  # a group shares its resampled twin
    assert len({str(drawn_user(seed)) for seed in range(6)}) > 1  # the seed draws it


def test_deliveryplan_plan_tool_scores_as_the_oracles_json_reply():
    import json

    from agents.deliveryplan.baselines import OracleAgent

    env_id = "hear_gym/DeliveryPlan-v0"
    for row in episode_rows(env_id, n=2, seed=0):
        env, _ = in_process(env_id, row, "text", "T")
        env.reset(seed=row["seed"], options=family(env_id).reset_options(row["item_id"]))
        oracle, replies = OracleAgent(), []
        observation, _ = env.reset(seed=row["seed"], options=family(env_id).reset_options(row["item_id"]))
        done = False
        while not done:
            replies.append(oracle.act(observation))
            observation, _, terminated, truncated, _ = env.step(replies[-1])
            done = terminated or truncated
        expected, _, _ = play(in_process(env_id, row, "text", "T")[0], replies)
        environment = environment_factory(env_id)()
        environment.reset(**row)
        for reply in replies:
            data = json.loads(reply)
            plan = data["plan"]
            environment.plan(
                evidence=",".join(data["evidence"]),
                emphasis=",".join(map(str, plan.pop("emphasis"))),
                **plan,
            )
        assert environment.done and environment.get_reward() == pytest.approx(expected)
        assert expected > 0  # the oracle earns something to compare
    environment = environment_factory(env_id)()
    environment.reset(**episode_rows(env_id, n=1, seed=0)[0])
    fields = {name: "mid" for name in ("rate", "pitch_level", "pitch_range", "energy", "pause")}
    result = environment.plan(evidence="", emphasis="one", contour="fall", voice_quality="modal", **fields)
    assert result.startswith("Invalid call:") and "emphasis" in result


def test_ambiguity_answer_tool_names_the_option_a_letter_reply_names():
    env_id = "hear_gym/Ambiguity-v0"
    rows = [r for r in episode_rows(env_id, n=6, seed=0)]
    for row in rows:
        for letter in "AB":
            environment = environment_factory(env_id)()
            environment.reset(**row)
            while not environment.done:
                environment.answer(option=letter)
            expected, done, _ = play(in_process(env_id, row, "text", "T-nopunct")[0], [letter] * 8)
            assert done and environment.get_reward() == expected


def test_hear2act_under_t_plus_s_shows_the_state_tag_after_every_call():
    """The T+S tag describes the latest user turn only: it is shown after every call, also when
    it did not change, and under T there is none."""
    row = episode_rows(HEAR2ACT, n=1, seed=0)[0]
    tools = environment_factory(HEAR2ACT, access="T+S", **H2A_OPTIONS)()
    env, _ = in_process(HEAR2ACT, row, "text", "T+S", **H2A_OPTIONS)
    first = tools.reset(**row)
    observation, *_ = env.reset(seed=row["seed"], options=family(HEAR2ACT).reset_options(row["item_id"]))
    assert first.endswith(f"[concern_state]\n{observation['concern_state']}")
    for call in (tools.ask, tools.ask, tools.clarify):
        shown = call()
        observation, *_ = env.step(tools.replies[-1])
        assert shown.splitlines()[-1] == f"[concern_state] {observation['concern_state']}"
    plain = environment_factory(HEAR2ACT, **H2A_OPTIONS)()
    plain.reset(**row)
    assert "concern_state" not in plain.ask()


@pytest.mark.parametrize("env_id", env_ids())
def test_every_tool_takes_only_its_required_arguments(env_id):
    """Each tool called with its required arguments alone (optional ones left out, as their
    docstrings allow) is played: never a Python error, never refused for a missing argument."""
    row = episode_rows(env_id, split=family(env_id).splits[0], n=1, seed=0)[0]
    for tool in tool_set(env_id).tools:
        environment = environment_factory(env_id)()
        environment.reset(**row)
        arguments = {p.name: 1 if p.kind is int else "1" for p in tool.params if p.required}
        result = getattr(environment, tool.name)(**arguments)
        assert isinstance(result, str) and "missing" not in result, (tool.name, result)


def test_voicegate_optional_arguments_take_the_schemas_default_or_stay_out():
    row = episode_rows(VOICEGATE, n=1, seed=0)[0]
    calls = {
        "place_order": {"item": "milk"},
        "post_publicly": {"text": "hi"},
        "start_vehicle": {"vehicle": "car"},
    }
    for name, arguments in calls.items():
        environment = environment_factory(VOICEGATE)()
        environment.reset(**row)
        getattr(environment, name)(**arguments)
        assert environment.done and environment.invalid_calls == 0, name
        if name == "place_order":
            assert '"quantity": 1' in environment.replies[0]  # the schema's default
        else:
            assert "platform" not in environment.replies[0] and "warmup" not in environment.replies[0]
