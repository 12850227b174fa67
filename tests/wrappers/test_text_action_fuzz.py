"""Every registered env's text action format takes any reply without raising: random text from
its action space, bracket nests far deeper than any parser recurses, broken JSON, tags and
numbers, replies over the length limit and lone surrogates. Malformed replies are the family's
invalid action (scored, the episode goes on), never an exception. Seeded and bounded: a few
hundred replies per env, a few seconds."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from hear_gym.core.registry import env_ids, family
from hear_gym.integrations.trl import tool_set
from hear_gym.wrappers.text_actions import MAX_REPLY_CHARS

N_REPLIES = 200
FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    ",",
    "\\",
    "null",
    "true",
    "1e999",
    "-0",
    "NaN",
    '{"evidence": [',
    '"plan": {',
    '"emphasis": [',
    "<|TOOL|>",
    "</|TOOL|>",
    "[Mute]",
    "[ACTION: ASK]",
    "[OPTION: 3]",
    "A",
    "(B)",
    "wait",
    "take_turn",
    " ",
    "\n",
    "\ud800",
    "\udfff",
    "é",
    "\x00",
]


def _nested(depth: int, rng: np.random.Generator) -> str:
    opener = str(rng.choice(["[", "{", '{"a":', '{"evidence": [', '{"plan":']))
    return opener * depth + "0" + "]" * depth


def replies(env: gym.Env, seed: int) -> list[str]:
    """The fuzzed replies: a third drawn from the action space, the rest built from fragments,
    deep nests and the family's own canonical replies cut and spliced."""
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    canonical = [tool_set_reply for tool_set_reply in (tool_set_replies(env) or ["{}"])]
    out = [_nested(2_000, rng), "[" * 2_000 + "]" * 2_000, "\ud800abc", "x" * (MAX_REPLY_CHARS + 10)]
    while len(out) < N_REPLIES:
        kind = rng.integers(4)
        if kind == 0:
            out.append(env.action_space.sample())
        elif kind == 1:
            out.append("".join(rng.choice(FRAGMENTS, size=int(rng.integers(1, 60)))))
        elif kind == 2:
            out.append(_nested(int(rng.integers(10, 3_000)), rng))
        else:
            base = str(rng.choice(canonical))
            cut = int(rng.integers(len(base) + 1))
            out.append(base[:cut] + str(rng.choice(FRAGMENTS)) * int(rng.integers(1, 400)) + base[cut:])
    return out


def tool_set_replies(env: gym.Env) -> list[str]:
    """Replies the family's tools write with simple arguments (well-formed text actions)."""
    written = []
    for tool in tool_set(env.spec.id).tools:
        arguments = {p.name: 1 if p.kind is int else "0" for p in tool.params}
        try:
            written.append(tool.reply(env.unwrapped, **arguments))
        except ValueError:  # InvalidCall: arguments this episode's grammar cannot say
            continue
    return written


@pytest.mark.parametrize("env_id", env_ids())
def test_no_text_action_raises(env_id):
    assert "text" in family(env_id).action_formats
    env = gym.make(env_id, access="T", actions="text")
    observation, _ = env.reset(seed=0)
    fuzzed = replies(env, seed=sum(env_id.encode()))
    for i, reply in enumerate(fuzzed):
        observation, reward, terminated, truncated, info = env.step(reply)
        assert np.isfinite(reward) and env.observation_space.contains(observation), repr(reply[:80])
        if terminated or truncated:
            env.reset(seed=i)


@pytest.mark.parametrize("env_id", env_ids())
def test_a_reply_utf8_cannot_encode_is_read_with_escapes_and_says_so(env_id):
    env = gym.make(env_id, access="T", actions="text")
    env.reset(seed=0)
    *_, info = env.step("\ud800abc")
    assert info.get("reply", "\\ud800abc") == "\\ud800abc" and "lone surrogates" in info["reply_error"]
    json.dumps(info).encode("utf-8")  # the record stays valid JSON


def test_deliveryplan_reads_a_deep_nest_as_malformed_and_a_plain_reply_as_before():
    from hear_gym.envs.deliveryplan.actions import MAX_JSON_DEPTH, parse_reply
    from hear_gym.envs.deliveryplan.verifier import MALFORMED

    assert parse_reply("[" * 2_000 + "]" * 2_000, 3) is MALFORMED
    assert (
        parse_reply('{"evidence": [], "plan": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}", 3)
        is MALFORMED
    )
    plan = {"rate": "mid", "pitch_level": "mid", "pitch_range": "mid", "energy": "mid", "pause": "mid"}
    reply = json.dumps(
        {
            "evidence": ["utt-1"],
            "plan": {**plan, "contour": "fall", "voice_quality": "modal", "emphasis": [0]},
        }
    )
    assert parse_reply(reply, 3) is not MALFORMED
