"""Stateful adversaries for the evaluation runner: agents that carry what they saw in one episode
into the next, and the stateless twin they are measured against.

A family's episode ids list related episodes side by side (a minimal pair's readings, an item and
its control). An agent that remembers the episode before can answer by position: it takes the
first valid action on an episode unlike the one before, and moves one option on (alternates) for
each further episode that reads like it. ``InstanceMemoryAdversary`` keeps that memory on itself
(a new agent per episode wipes it); ``ProcessMemoryAdversary`` keeps it on its class, where a new
agent still finds it, as state hidden in a shared resource would (only the episode order can
defeat it). ``FirstValidTwin`` is the same policy with no memory: what the adversary scores when
the order tells it nothing.
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np

SIMILAR = 0.9  # difflib ratio of the first observations' text: a pair's readings, an item and its control


def observation_text(observation: dict[str, Any]) -> str:
    return "|".join(str(observation[key]) for key in sorted(observation) if isinstance(observation[key], str))


def similar(a: str, b: str) -> bool:
    if not (a and b):
        return False
    matcher = difflib.SequenceMatcher(None, a, b)
    return matcher.quick_ratio() >= SIMILAR and matcher.ratio() >= SIMILAR  # the first bounds the second


class FirstValidTwin:
    """The adversary without memory: the first valid action at every turn."""

    required_access = "T"  # reads only the text, which every access condition carries

    def reset(self, seed: int | None = None) -> None:
        self.shift = 0

    def act(self, observation: dict[str, Any]) -> int:
        valid = np.flatnonzero(observation["action_mask"])
        return int(valid[self.shift % len(valid)])


class _MemoryAdversary(FirstValidTwin):
    def recall(self) -> dict[str, Any]:
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.first_turn = True

    def act(self, observation: dict[str, Any]) -> int:
        memory = self.recall()
        if self.first_turn:
            self.first_turn = False
            text = observation_text(observation)
            self.shift = memory["shift"] + 1 if similar(text, memory["text"]) else 0
            memory.update(text=text, shift=self.shift)
        return super().act(observation)


class InstanceMemoryAdversary(_MemoryAdversary):
    def __init__(self) -> None:
        self.memory = {"text": "", "shift": 0}

    def recall(self) -> dict[str, Any]:
        return self.memory


class ProcessMemoryAdversary(_MemoryAdversary):
    memory: dict[str, Any] = {"text": "", "shift": 0}

    @classmethod
    def forget(cls) -> None:
        cls.memory = {"text": "", "shift": 0}

    def recall(self) -> dict[str, Any]:
        return type(self).memory
