"""The reward function GRPO calls on a batch of single decisions, one rule for every task.

A subclass says how one reply scores (``score(item_id, reply) -> (reward, valid)``: the env's
reward for it) and, optionally, under which names it is reported (``groups``). The batch loop is
shared: a reply cut by the token cap before its end-of-turn token is scored as the empty reply
(never by whatever prefix the cap left); the valid-format rate and the mean reward per group go
to TRL's ``log_metric`` as ``valid_format`` and ``reward/<group>``; the time spent is summed in
``seconds`` (the environment's share of a training step).
"""

from __future__ import annotations

import time
from collections.abc import Iterable


class DecisionReward:
    __name__ = "env_reward"  # TRL names reward columns after it

    def __init__(self, eos_token_ids: Iterable[int]) -> None:
        self.eos_token_ids = set(eos_token_ids)
        self.seconds = 0.0

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        """(reward, whether the reply was well formed)."""
        raise NotImplementedError

    def groups(self, item_id: str, item_family: str) -> tuple[str, ...]:
        """The names a reply's reward is averaged under; by default its item family."""
        return (item_family,)

    def __call__(
        self, completions, completion_ids, item_id, item_family, log_metric=None, **_
    ) -> list[float]:
        start = time.perf_counter()
        rewards, valid, by_group = [], [], {}
        for completion, ids, item, item_group in zip(
            completions, completion_ids, item_id, item_family, strict=True
        ):
            reply = completion[-1]["content"] if isinstance(completion, list) else completion
            if not ids or ids[-1] not in self.eos_token_ids:
                reply = ""  # cut by the token cap
            reward, ok = self.score(item, reply)
            rewards.append(reward)
            valid.append(ok)
            for name in self.groups(item, item_group):
                by_group.setdefault(name, []).append(reward)
        self.seconds += time.perf_counter() - start
        if log_metric is not None:
            log_metric("valid_format", sum(valid) / len(valid))
            for name in sorted(by_group):
                log_metric(f"reward/{name}", sum(by_group[name]) / len(by_group[name]))
        return rewards
