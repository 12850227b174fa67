"""How an episode shows its case's records: the order they are listed in and the cue id each
carries, drawn at every reset from the env's seeded generator.

Ids are ``e`` and three digits, distinct within the episode; the edited source record gets a
fresh one. Neither the ids nor the order are a function of the case, so an agent that knows the
whole suite (the case tables and this code) learns nothing about a record from its id or its
place. Citations are scored by record: ``to_kinds`` maps the ids a planner cites back to the
kinds the verifier's gold sets name, and an id the episode did not show stays an unknown
citation (hallucinated evidence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hear_gym.envs.deliveryplan.cases import RECORD_KINDS, SOURCE_KIND

CUE_ID = re.compile(r"\[(e[0-9]{3})\]")
ID_NUMBERS = (100, 1000)  # e100 .. e999
UNLISTED = "unlisted:"  # prefix of a cited id the episode did not show


@dataclass(frozen=True)
class Display:
    order: tuple[str, ...]  # record kinds, in the order the prompt lists them
    ids: tuple[dict[str, str], dict[str, str]]  # per side (original, edited): kind -> shown id

    def shown_ids(self, side: int) -> list[str]:
        """The side's ids in listing order."""
        return [self.ids[side][kind] for kind in self.order]

    def to_kinds(self, side: int, cited: Iterable[str]) -> frozenset[str]:
        by_id = {cue: kind for kind, cue in self.ids[side].items()}
        return frozenset(by_id.get(c, UNLISTED + c) for c in cited)

    def to_ids(self, side: int, kinds: Iterable[str]) -> list[str]:
        return sorted(self.ids[side][k] for k in kinds)


def draw_display(rng: np.random.Generator) -> Display:
    order = tuple(RECORD_KINDS[i] for i in rng.permutation(len(RECORD_KINDS)))
    numbers = rng.choice(np.arange(*ID_NUMBERS), size=len(RECORD_KINDS) + 1, replace=False)
    original = {kind: f"e{n}" for kind, n in zip(RECORD_KINDS, numbers, strict=False)}
    return Display(order, (original, {**original, SOURCE_KIND: f"e{numbers[-1]}"}))
