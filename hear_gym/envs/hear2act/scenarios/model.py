"""Typed Hear2Act scenarios: one line of the scenario bank (schema in DESIGN.md).

What the user *says* (``request``, the candidate list) is kept apart from what the user *hides*
(``concerns``, ``gold_option``): agents only ever see the former through observations.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CONCERN_LEVELS = ("L1", "L2", "L3")
N_CANDIDATES = 11
Role = Literal["pattern", "safe_alternative", "violates_visible"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Persona(_Frozen):
    situation: str
    urgency: Literal["low", "medium", "high"]
    budget_tier: Literal["low", "mid", "high"]
    expertise: Literal["novice", "intermediate", "expert"]
    life_context: str


class Budget(_Frozen):
    """The visible requirement every opening request states."""

    max_price: float = Field(gt=0)
    unit: str

    def phrase(self) -> str:
        return f"{format_price(self.max_price)} {self.unit}"


class Concern(_Frozen):
    level: Literal["L1", "L2", "L3"]
    attribute: str  # key of a concern dimension of the scenario's domain
    requirement: str


class Candidate(_Frozen):
    option_id: int = Field(ge=1, le=N_CANDIDATES)
    name: str
    price: float = Field(gt=0)
    rating: float = Field(ge=1.0, le=5.0)
    description: str
    satisfies: tuple[bool, bool, bool]
    role: Role

    @property
    def fully_satisfying(self) -> bool:
        return all(self.satisfies)


class Scenario(_Frozen):
    scenario_id: str
    domain: str
    family: str
    seed_index: int = Field(ge=0)
    persona: Persona
    request: str
    budget: Budget
    concerns: tuple[Concern, Concern, Concern]
    candidates: tuple[Candidate, ...]
    gold_option: int
    opening_option: int
    generator_version: str

    @model_validator(mode="after")
    def _invariants(self) -> Scenario:
        if [c.level for c in self.concerns] != list(CONCERN_LEVELS):
            raise ValueError("concerns must be ordered L1, L2, L3")
        if len({c.attribute for c in self.concerns}) != 3:
            raise ValueError("the three concerns must name different attributes")
        if len(self.candidates) != N_CANDIDATES:
            raise ValueError(f"expected {N_CANDIDATES} candidates, got {len(self.candidates)}")
        if [c.option_id for c in self.candidates] != list(range(1, N_CANDIDATES + 1)):
            raise ValueError("candidate option_ids must be 1..11 in order")
        patterns = sorted(c.satisfies for c in self.candidates if c.role == "pattern")
        if len(patterns) != 8 or len(set(patterns)) != 8:
            raise ValueError("the 8 'pattern' candidates must cover each satisfaction pattern once")
        roles = [c.role for c in self.candidates]
        if roles.count("safe_alternative") != 1 or roles.count("violates_visible") != 2:
            raise ValueError("need exactly 1 safe_alternative and 2 violates_visible candidates")
        gold = self.candidate(self.gold_option)
        if not (gold.fully_satisfying and gold.role == "pattern"):
            raise ValueError("gold_option must be the pattern candidate satisfying L1, L2 and L3")
        if self.opening_option == self.gold_option:
            raise ValueError("the opening option must not be the gold")
        for cand in self.candidates:
            over = cand.price > self.budget.max_price
            if over != (cand.role == "violates_visible"):
                raise ValueError(f"option {cand.option_id}: price vs budget disagrees with its role")
        return self

    def candidate(self, option_id: int) -> Candidate:
        if not 1 <= option_id <= len(self.candidates):
            raise KeyError(f"no option {option_id}")
        return self.candidates[option_id - 1]

    def concern(self, level: str) -> Concern:
        return self.concerns[CONCERN_LEVELS.index(level)]


def format_price(value: float) -> str:
    return f"${value:,.0f}" if value >= 10 else f"${value:,.2f}"
