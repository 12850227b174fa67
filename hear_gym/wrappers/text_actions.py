"""Text actions: an agent (e.g. an LLM) acts with replies instead of Discrete indices.

``TextActions(env, parse)`` turns the action space into ``Text``; each reply is cut to
``MAX_REPLY_CHARS``, parsed by the family's strict ``parse(base_env, reply)`` into the action the
env understands, and played through the base env's ``step_decoded(action, reply)``. What a
malformed reply does is the family's rule (Hear2Act: an invalid action that uses the turn;
VoiceGate: a scored, penalized outcome); the wrapper never raises on one. Characters UTF-8 cannot
encode (lone surrogates) are written as ``\\uXXXX`` escapes before the reply is parsed, so the
reply in ``info`` and in every record stays valid JSON; ``info["reply_error"]`` then says so.

It must wrap the base env directly (access-condition wrappers go outside it), because the parser
reads the base env's episode state (e.g. the domain whose attributes a question names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from hear_gym.core.text import TEXT_CHARSET

MAX_REPLY_CHARS = 4_096
Parser = Callable[[gym.Env, str], Any]


class TextActions(gym.Wrapper):
    def __init__(self, env: gym.Env, parse: Parser) -> None:
        if env is not env.unwrapped or not hasattr(env, "step_decoded"):
            raise TypeError(
                "TextActions must wrap a base env with step_decoded directly; apply access "
                "conditions outside it, or use gym.make(..., actions='text')"
            )
        super().__init__(env)
        self.parse = parse
        self.action_space = gym.spaces.Text(max_length=MAX_REPLY_CHARS, charset=TEXT_CHARSET)

    def step(self, action):
        if not isinstance(action, str):
            raise TypeError(f"TextActions expects a str reply, got {type(action).__name__}")
        reply = action[:MAX_REPLY_CHARS]
        encodable = reply.encode("utf-8", "backslashreplace").decode("utf-8")
        result = self.env.step_decoded(self.parse(self.env, encodable), encodable)
        if encodable == reply:
            return result
        *played, info = result
        error = (
            "the reply held characters UTF-8 cannot encode (lone surrogates); they were read as \\u escapes"
        )
        return (*played, {**info, "reply_error": error})
