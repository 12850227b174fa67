"""VoiceGate action grammar: strict parsing, Discrete layout, and no crash on any input."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hear_gym.envs.voicegate.actions import (
    ANSWER0,
    MUTE,
    N_ACTIONS,
    TOOL0,
    DecisionKind,
    action_mask,
    decode,
    encode,
    format_tool_call,
    parse_reply,
)
from hear_gym.envs.voicegate.items.pools import TOOL_NAMES

CALL = format_tool_call("unlock_door", {"door": "front"})


@pytest.mark.parametrize("reply", ["[Mute]", "[mute]", "  [ MUTE ]\n"])
def test_mute_token_is_normalized(reply):
    assert parse_reply(reply).kind is DecisionKind.MUTE


def test_well_formed_tool_call_keeps_arguments():
    action = parse_reply(f"\n {CALL} \n")
    assert (action.kind, action.tool, action.params) == (DecisionKind.TOOL, "unlock_door", {"door": "front"})


@pytest.mark.parametrize(
    "reply,reason",
    [
        ("Okay. [Mute]", "mute token"),
        (f"Sure! {CALL}", "outside"),
        (CALL + CALL, "exactly one"),
        ('<|TOOL|>{"name": "unlock_door", "params": {}}', "exactly one"),
        ('<|tool|>{"name": "unlock_door", "params": {}}</|tool|>', "exactly one"),
        ("<|TOOL|>{name: unlock_door}</|TOOL|>", "not JSON"),
        ('<|TOOL|>{"name": "unlock_door"}</|TOOL|>', "exactly the keys"),
        ('<|TOOL|>{"name": "launch_rocket", "params": {}}</|TOOL|>', "unknown tool"),
        ('<|TOOL|>{"name": "unlock_door", "params": []}</|TOOL|>', "must be an object"),
        ("   ", "empty"),
    ],
)
def test_malformed_replies_name_their_reason(reply, reason):
    action = parse_reply(reply)
    assert action.kind is DecisionKind.MALFORMED and reason in action.error


def test_free_text_is_an_answer():
    action = parse_reply("The pharmacy closes at nine.")
    assert action.kind is DecisionKind.ANSWER and action.text == "The pharmacy closes at nine."


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_parses_without_crashing(reply):
    action = parse_reply(reply)
    if action.kind is DecisionKind.TOOL:  # only a single, exact block can be a call
        body = reply.strip()[len("<|TOOL|>") : -len("</|TOOL|>")]
        assert json.loads(body)["name"] in TOOL_NAMES


def test_discrete_layout_round_trips_and_masks():
    assert N_ACTIONS == 13 and decode(MUTE, 2).kind is DecisionKind.MUTE
    for index in range(N_ACTIONS):
        action = decode(index, 2)
        assert encode(action) == index
    assert decode(TOOL0 + 2, 1).tool == TOOL_NAMES[2]
    assert decode(ANSWER0 + 1, 1).kind is DecisionKind.MALFORMED  # one-utterance input
    assert decode(99, 2).kind is DecisionKind.MALFORMED
    assert action_mask(1).tolist() == [1] * (N_ACTIONS - 1) + [0]
    assert action_mask(2).sum() == N_ACTIONS


@pytest.mark.parametrize("opener,closer", [("[", "]"), ("{", "}"), ('{"a":', "}")])
def test_deep_nesting_is_malformed_not_a_crash(opener, closer):
    for depth in (2_000, 100_000):
        action = parse_reply(f"<|TOOL|>{opener * depth}{closer * depth}</|TOOL|>")
        assert action.kind is DecisionKind.MALFORMED and "deeper" in action.error


def test_brackets_inside_strings_do_not_count_as_nesting():
    call = format_tool_call("send_message", {"to": "Sam", "text": "[[[[{{{{" * 50})
    assert parse_reply(call).kind is DecisionKind.TOOL


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=40,
    )
)
def test_nested_params_never_crash_the_env(params):
    import gymnasium as gym

    env = gym.make("hear_gym/VoiceGate-v0", access="T", actions="text")
    env.reset(seed=0)
    env.step(format_tool_call("send_message", {"nested": params}))
