"""A spy on a GRPO reward function: which items each TRL reward call scored, in batch order."""

from __future__ import annotations


def record_reward_calls(monkeypatch, reward_class) -> list[list[str]]:
    """Patch ``reward_class.__call__`` to append each call's ``item_id`` column (one list per
    call) to the returned list, then score as before."""
    seen: list[list[str]] = []
    original = reward_class.__call__

    def spy(self, completions, completion_ids, item_id, item_family, **kwargs):
        seen.append(list(item_id))
        return original(self, completions, completion_ids, item_id, item_family, **kwargs)

    monkeypatch.setattr(reward_class, "__call__", spy)
    return seen


def vary_rewards(monkeypatch, reward_class) -> list[list[str]]:
    """Patch ``reward_class.__call__`` to add a small completion-dependent term to each reward (a
    random tiny model is cut by the cap every time: all rewards equal, every group dropped, no
    update); records each call's ``item_id`` column like ``record_reward_calls``."""
    seen: list[list[str]] = []
    original = reward_class.__call__

    def call(self, completions, completion_ids, item_id, item_family, **kwargs):
        seen.append(list(item_id))
        rewards = original(self, completions, completion_ids, item_id, item_family, **kwargs)
        return [r + 0.01 * (sum(ids) % 7) for r, ids in zip(rewards, completion_ids, strict=True)]

    monkeypatch.setattr(reward_class, "__call__", call)
    return seen
