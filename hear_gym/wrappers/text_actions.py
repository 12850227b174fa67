"""Text actions: let an LLM act with replies (Hear2Act: P6a cards; VoiceGate: its action grammar)
instead of Discrete indices."""

from __future__ import annotations

import gymnasium as gym

from hear_gym.envs.hear2act.env import TEXT_CHARSET, Hear2ActEnv
from hear_gym.envs.hear2act.actions import parse_p6a
from hear_gym.envs.voicegate.env import VoiceGateEnv
from hear_gym.envs.voicegate.actions import parse_reply

MAX_REPLY_CHARS = 4_096


class TextActions(gym.Wrapper):
    """Action space: a P6a reply string (``[ACTION: RECOMMEND] [OPTION: 3] ...``).

    The reply is parsed strictly (see ``hear2act_actions.parse_p6a``); a malformed reply is an
    invalid action: the turn is used, the user asks to rephrase, the reason is in
    ``info["invalid_action"]``. The assistant's own words go into the transcript. Replies
    longer than ``MAX_REPLY_CHARS`` are cut before parsing.

    It must wrap the base env directly (access-condition wrappers go outside it);
    ``gym.make("hear_gym/Hear2Act-v0", actions="text")`` builds that order.
    """

    def __init__(self, env: Hear2ActEnv) -> None:
        if not isinstance(env, Hear2ActEnv):
            raise TypeError("TextActions must wrap a Hear2ActEnv directly; apply access "
                            "conditions outside it, or use gym.make(..., actions='text')")
        super().__init__(env)
        self.action_space = gym.spaces.Text(max_length=MAX_REPLY_CHARS, charset=TEXT_CHARSET)

    def step(self, action):
        if not isinstance(action, str):
            raise TypeError(f"TextActions expects a str reply, got {type(action).__name__}")
        reply = action[:MAX_REPLY_CHARS]
        parsed = parse_p6a(reply, self.env.domain, self.env.assistant)
        return self.env.step_decoded(parsed.action, reply)


class VoiceGateTextActions(gym.Wrapper):
    """Action space: a reply in VoiceGate's canonical grammar (``[Mute]``, one
    ``<|TOOL|>{...}</|TOOL|>`` block, or a free answer), parsed strictly by
    ``voicegate_actions.parse_reply``; malformed replies are scored, never raised."""

    def __init__(self, env: VoiceGateEnv) -> None:
        if not isinstance(env, VoiceGateEnv):
            raise TypeError("VoiceGateTextActions must wrap a VoiceGateEnv directly")
        super().__init__(env)
        self.action_space = gym.spaces.Text(max_length=MAX_REPLY_CHARS, charset=TEXT_CHARSET)

    def step(self, action):
        if not isinstance(action, str):
            raise TypeError(f"VoiceGateTextActions expects a str reply, got {type(action).__name__}")
        reply = action[:MAX_REPLY_CHARS]
        return self.env.step_decoded(parse_reply(reply), reply)
