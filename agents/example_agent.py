"""A Hear2Act agent to copy when writing your own: the whole interface in one small class.

An agent needs ``required_access`` (the access condition whose observation keys it reads),
``reset(seed)`` at the start of each episode and ``act(observation)`` on each turn; the optional
``configure(env_options)`` receives the run's env settings (turn cost, reward, feedback) as the
runner builds it (a new agent for every episode).
Pass the class itself (any zero-argument callable returning an agent) to
``hear_gym.eval.evaluate``; no entry point is needed until you want ``hear-gym eval`` to find it
by name (then register it under ``hear_gym.agents.hear2act`` in your ``pyproject.toml``).

This one recommends the options in list order, asks one general question about each and
confirms an option once the user's reply to that question names no unmet need. It reads the
transcript only (access ``T``): a policy to beat, not a good one.
"""

from __future__ import annotations

from typing import Any

from hear_gym.envs.hear2act.actions import ASK_GENERAL, CONFIRM, RECOMMEND0

# words a user's reply to "is anything about this option not right for you?" uses when it is
_STILL_UNHAPPY = ("need", "but", "not", "n't", "rather", "prefer", "too")


class AskOnceAgent:
    required_access = "T"

    def __init__(self) -> None:
        self.turn_cost = 0.0

    def configure(self, env_options: dict[str, Any]) -> None:
        self.turn_cost = float(env_options.get("turn_cost", 0.0))  # unused here; shown for the hook

    def reset(self, seed: int | None = None) -> None:
        self.next_option, self.asked = 1, False

    def act(self, observation: dict[str, Any]) -> int:
        mask = observation["action_mask"]
        if int(observation["current_option"]) == 0 or (self.asked and self._unhappy(observation)):
            return self._recommend_next(mask)
        if not self.asked:
            self.asked = True
            return ASK_GENERAL
        return CONFIRM

    def _unhappy(self, observation: dict[str, Any]) -> bool:
        reply = str(observation["last_user_utterance"]).lower()
        return any(word in reply for word in _STILL_UNHAPPY)

    def _recommend_next(self, mask) -> int:
        self.asked = False
        for option in range(self.next_option, 12):
            if mask[RECOMMEND0 + option - 1]:
                self.next_option = option + 1
                return RECOMMEND0 + option - 1
        return CONFIRM  # every option tried: settle for the current one
