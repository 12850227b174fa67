"""Small evaluation runs for the viewer tests: two cells of a legal-action agent (random and
first legal action) under the family's audio condition (its first condition without one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval import evaluate

CELL_OPTIONS = {"hear_gym/Hear2Act-v0": (("feedback", "prosody"),)}


class LegalAgent:
    def __init__(self, access: str, first: bool = False):
        self.required_access, self.first = access, first

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[0] if self.first else self.rng.choice(legal))


def audio_access(env_id: str) -> str:
    conditions = family(env_id).access_conditions
    return "A+T" if "A+T" in conditions else conditions[0]


def legal_run(env_id: str, out: Path, episodes: int = 2) -> Path:
    access, options = audio_access(env_id), CELL_OPTIONS.get(env_id, ())
    config = RunConfig(
        env_id,
        (Cell("random", access, options), Cell("first", access, options)),
        family(env_id).item_ids("test")[:episodes],
        seed=3,
    )
    factories = {"random": lambda: LegalAgent(access), "first": lambda: LegalAgent(access, first=True)}
    evaluate(out, config, factories, progress=False)
    return out
