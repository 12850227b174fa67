"""``simulated_probe_planner@T+S``: the planner hearing the user through a simulated probe.

The agent takes the T+S tag, keeps only whether the turn is a genuine acceptance, passes it
through a ``VerdictEar`` (``agents.hear2act.simulated_ear``; errors independent per turn, drawn
from the episode's seed) and hands the planner the verdict as the T+S^ sentence a real concern
probe would write, to be weighed at the ear's own rates. Everything else the planner sees is
the transcript. It is the planner fed a probe whose operating point is known exactly, so that
its return minus ``planner@T``'s measures what hearing of that quality is worth
(``benchmarks/hear2act/hearing_value.py``). It reads the ground-truth tag, so it is a
measuring instrument, not a listener: it needs T+S, the diagnostic condition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.hear2act.audio_probe import ConcernInferrer
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.simulated_ear import VerdictEar, ear_generator, resolved_tag
from hear_gym.envs.hear2act.access import ConcernStateTag


class SimulatedProbePlannerAgent:
    """``PlannerAgent`` reading a ``VerdictEar``'s verdict on each turn (module docstring)."""

    required_access = ("T+S",)

    def __init__(self, recall: float, false_resolved: float, **planner_options: Any) -> None:
        self.ear = VerdictEar(recall, false_resolved)
        self.planner = PlannerAgent(
            state_recall=recall, state_false_resolved=false_resolved, **planner_options
        )
        self.reset()

    def configure(self, env_options: Mapping[str, Any]) -> None:
        self.planner.configure(env_options)

    def reset(self, seed: int | None = None) -> None:
        self.planner.reset(seed)
        self.rng = ear_generator(seed)

    def act(self, observation: dict[str, Any]) -> int:
        if ConcernStateTag.KEY not in observation:
            raise KeyError(f"{type(self).__name__} simulates a probe on the T+S tag: it needs access T+S")
        heard = self.ear.hear(resolved_tag(observation[ConcernStateTag.KEY]), self.rng)
        sentence = ConcernInferrer.SENTENCES["resolved" if heard else "unresolved"]
        words = {k: v for k, v in observation.items() if k != ConcernStateTag.KEY}
        return self.planner.act({**words, "inferred_state": sentence})
