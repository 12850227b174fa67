"""How an episode shows its case's records: the order they are listed in and the cue id each
carries, drawn at every reset from the env's seeded generator.

Ids are ``e`` and three digits, distinct within the episode, and every record gets a fresh id on
the edited side, so no id says which record the edit changed. Neither the ids nor the order are a
function of the case, so an agent that knows the whole suite (the case tables and this code)
learns nothing about a record from its id or its place. Citations are scored by record:
``to_names`` maps the ids a planner cites back to the record names the verifier's gold sets use,
and an id the side did not show stays an unknown citation (hallucinated evidence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hear_gym.envs.deliveryplan.cases import RECORD_NAMES

CUE_ID = re.compile(r"\[(e[0-9]{3})\]")
ID_NUMBERS = (100, 1000)  # e100 .. e999
UNLISTED = "unlisted:"  # prefix of a cited id the side did not show
N_SIDES = 2


@dataclass(frozen=True)
class Display:
    order: tuple[str, ...]  # record names, in the order the prompt lists them
    ids: tuple[dict[str, str], dict[str, str]]  # per side (original, edited): record name -> shown id

    def shown_ids(self, side: int) -> list[str]:
        """The side's ids in listing order."""
        return [self.ids[side][name] for name in self.order]

    def to_names(self, side: int, cited: Iterable[str]) -> frozenset[str]:
        by_id = {cue: name for name, cue in self.ids[side].items()}
        return frozenset(by_id.get(c, UNLISTED + c) for c in cited)

    def to_ids(self, side: int, names: Iterable[str]) -> list[str]:
        return sorted(self.ids[side][n] for n in names)


def draw_display(rng: np.random.Generator) -> Display:
    order = tuple(RECORD_NAMES[i] for i in rng.permutation(len(RECORD_NAMES)))
    numbers = rng.choice(np.arange(*ID_NUMBERS), size=N_SIDES * len(RECORD_NAMES), replace=False)
    sides = numbers.reshape(N_SIDES, len(RECORD_NAMES))
    ids = tuple({name: f"e{n}" for name, n in zip(RECORD_NAMES, side, strict=True)} for side in sides)
    return Display(order, ids)
