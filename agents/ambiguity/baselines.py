"""Ambiguity baselines for ``hear-gym eval --env hear_gym/Ambiguity-v0`` (the uniform random agent
is the shared ``agents.random_agent.RandomAgent``).

* ``TextOnlyAgent``: the text solver (``text_solver``) fitted on the train split when the agent is
  built, answering from the question and the transcript; it cannot hear, so it reads any text
  condition (``T`` with punctuation, ``T-nopunct``, or the words of ``A+T``).
* ``FirstOptionAgent``: always option A, the position-bias control.
* ``ProsodicAgent`` (``prosodic_agent``): the prosodic-feature classifier, for the audio conditions.
"""

from __future__ import annotations

from typing import Any

from agents.ambiguity.text_solver import TextSolver, example_of, trained_solver


class TextOnlyAgent:
    required_access = ("T", "T-nopunct", "A+T")

    def __init__(self, solver: TextSolver | None = None) -> None:
        self.solver = solver or trained_solver()

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        return self.solver.choose(example_of(observation))


class FirstOptionAgent:
    required_access = ("T", "T-nopunct", "A+T", "A")

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        return 0
