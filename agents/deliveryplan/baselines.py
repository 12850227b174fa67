"""The six controls as agents (entry-point group ``hear_gym.agents.deliveryplan``): each plays a
planner of ``planners`` through the env's strict JSON text actions under access ``T``.

The controls are references over the released suite, as the paper's are: an agent finds the
case on show from the cue id of its utterance record (ids are per-case hashes) and hands the
planner the case, which reads only what its docstring allows. Fitted controls learn from the
training split of the partition the env was built with (``configure``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from agents.deliveryplan.planners import PLANNERS, Fitted
from hear_gym.envs.deliveryplan.actions import format_reply
from hear_gym.envs.deliveryplan.cases import Case, generate_cases
from hear_gym.envs.deliveryplan.verifier import PlannerOutput

_UTTERANCE_CUE = re.compile(r"\[(utt-[0-9a-f]{6})\]")


@cache
def _case_by_utterance_cue() -> dict[str, Case]:
    return {c.original.records[0].cue_id: c for c in generate_cases()}


@cache
def _fitted(partition: str) -> Fitted:
    return Fitted.from_split(partition)


def case_on_show(text: str) -> Case:
    found = _UTTERANCE_CUE.search(text)
    if found is None or found.group(1) not in _case_by_utterance_cue():
        raise ValueError("the observation names no DeliveryPlan case (is this a DeliveryPlan prompt?)")
    return _case_by_utterance_cue()[found.group(1)]


class ControlAgent:
    """Plays ``planner`` (a name in ``PLANNERS``); ``seed`` drives the shuffled delta."""

    required_access = "T"
    action_format = "text"
    planner = "oracle"

    def __init__(self, seed: int = 0, partition: str = "public") -> None:
        self.seed, self.partition = seed, partition
        self._first: PlannerOutput | None = None

    def configure(self, env_options: Mapping[str, Any]) -> None:
        self.partition = env_options.get("partition", self.partition)

    def reset(self, seed: int | None = None) -> None:
        self._first = None

    def plan(self, observation: dict[str, Any]) -> PlannerOutput:
        case = case_on_show(observation["text"])
        side = int(observation["step"][0])
        output = PLANNERS[self.planner](case, side, self._first, _fitted(self.partition), self.seed)
        if side == 0:
            self._first = output
        return output

    def act(self, observation: dict[str, Any]) -> str:
        return format_reply(self.plan(observation))


class TextOnlyAgent(ControlAgent):
    planner = "text_only"


class OracleAgent(ControlAgent):
    planner = "oracle"


class PriorOnlyAgent(ControlAgent):
    planner = "prior_only"


class DeclaredDeltaAgent(ControlAgent):
    planner = "declared_delta"


class CitationEchoAgent(ControlAgent):
    planner = "citation_echo"


class ShuffledDeltaAgent(ControlAgent):
    planner = "shuffled_delta"


CONTROL_AGENTS: dict[str, type[ControlAgent]] = {
    "text_only": TextOnlyAgent,
    "oracle": OracleAgent,
    "prior_only": PriorOnlyAgent,
    "declared_delta": DeclaredDeltaAgent,
    "citation_echo": CitationEchoAgent,
    "shuffled_delta": ShuffledDeltaAgent,
}
