"""The controls as agents (entry-point group ``hear_gym.agents.deliveryplan``): each plays a
planner of ``planners`` through the env's strict JSON text actions under access ``T``.

An agent reads only its observation: the records' ids, kinds and (under ``T``) the source
labels, parsed from the prompt (``ShownSide``); it keeps what it planned on the original side
for the edit, and is reset between episodes. Fitted controls learn from the training material
of the partition the env was built with (``configure``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from agents.deliveryplan.planners import PLANNERS, Fitted, Memory, ShownSide
from hear_gym.envs.deliveryplan.actions import format_reply
from hear_gym.envs.deliveryplan.verifier import PlannerOutput


@cache
def fitted(partition: str) -> Fitted:
    return Fitted.from_split(partition)


class ControlAgent:
    """Plays ``planner`` (a name in ``PLANNERS``); ``seed`` seeds the shuffled delta's draws."""

    required_access = "T"
    action_format = "text"
    planner = "oracle"

    def __init__(self, seed: int = 0, partition: str = "public") -> None:
        self.seed, self.partition = seed, partition
        self.rng = np.random.default_rng(seed)
        self.memory = Memory()

    def configure(self, env_options: Mapping[str, Any]) -> None:
        self.partition = env_options.get("partition", self.partition)

    def reset(self, seed: int | None = None) -> None:
        self.memory = Memory()
        if seed is not None:
            self.rng = np.random.default_rng([self.seed, seed])

    def plan(self, observation: dict[str, Any]) -> PlannerOutput:
        shown = ShownSide.read(observation["text"])
        step = int(observation["step"][0])
        output = PLANNERS[self.planner](shown, step, self.memory, fitted(self.partition), self.rng)
        if step == 0:
            self.memory = Memory(output, shown.source_key)
        return output

    def act(self, observation: dict[str, Any]) -> str:
        return format_reply(self.plan(observation))


def control(name: str) -> type[ControlAgent]:
    return type(f"{name.title().replace('_', '')}Agent", (ControlAgent,), {"planner": name})


CONTROL_AGENTS: dict[str, type[ControlAgent]] = {name: control(name) for name in PLANNERS}
TextOnlyAgent = CONTROL_AGENTS["text_only"]
OracleAgent = CONTROL_AGENTS["oracle"]
PriorOnlyAgent = CONTROL_AGENTS["prior_only"]
DeclaredDeltaAgent = CONTROL_AGENTS["declared_delta"]
CitationEchoAgent = CONTROL_AGENTS["citation_echo"]
ShuffledDeltaAgent = CONTROL_AGENTS["shuffled_delta"]
BlindEditAgent = CONTROL_AGENTS["blind_edit"]
