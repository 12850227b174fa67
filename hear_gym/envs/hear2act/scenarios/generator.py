"""Deterministic Hear2Act scenario generator (paper section 3.1, Appendix A and G.1).

``generate_scenario(domain, seed_index)`` is a pure function of the generator version, the
domain schema and the seed index.

The paper's requirement is that the best-fitting option "does not lead on visible attributes
such as price or rating, while the other candidates remain plausible under incomplete
information". Every option describes every concern dimension of its domain (the agent must be
able to find the gold once it knows the needs), so the *satisfaction matrix* is public. The
construction therefore makes that matrix uninformative: the decoy dimensions realize the same
structure as the hidden ones, so that a solver that knows these rules, reads every description
and hears the hard constraint stated after the opening still finds each L1-feasible option
equally likely to be the gold (chance, 1 in 5).

Rows and columns. The nine in-budget options are five *feasible* rows (they meet L1) and four
*infeasible* rows (they miss it). Every concern dimension other than L1 is a column: a
*strong* column is met by 3 of the 5 feasible rows, a *moderate* column by 2 of them. A strong
column S and a moderate column M can be (L2, L3) exactly when they share one feasible row: over
(L1, S, M) the feasible rows then realize TTT (the shared row, the gold), TTF twice (a pattern
and the safe alternative), TFT and TFF, i.e. the paper's patterns plus its safe alternative.

Construction:

1. L1: one concern dimension of the domain, drawn per seed; its requirement phrase is drawn too.
2. Columns: the other dimensions get a *balanced design*: strong and moderate columns over the
   feasible rows such that every feasible row is the shared row of equally many consistent
   (strong, moderate) pairs (``balanced_designs``; designs exist for 5-7 columns). On the four
   infeasible rows every strong column takes one half of one split of the rows into two pairs,
   every moderate column one half of a different split, so every (strong, moderate) pair shows
   the four patterns FTT, FTF, FFT, FFF there.
3. (L2, L3): one consistent (strong, moderate) pair, drawn uniformly. Given everything visible,
   each consistent pair is equally likely, hence each feasible row equally likely to be the gold.
4. Roles: the feasible rows are the patterns TTT (gold), TTF, TFT, TFF and the safe alternative
   (one of the two TTF rows, drawn); the infeasible rows are the patterns F**.
   Two more options are over the stated budget (role ``violates_visible``) and meet each
   dimension by a fair coin, so they carry no information either.
5. Opening: one infeasible row, drawn (so its pattern over L2 and L3 is not fixed). It is strictly
   the cheapest and strictly the best rated of all eleven, so the gold never leads on price or
   rating and every rollout starts from an option that looks best but breaks the hard constraint.
   Every other in-budget option has a price uniform below the budget and a rating uniform in
   ``RATING_RANGE`` whatever its role; the over-budget ones cost 1.15-1.6 times the budget.
6. Descriptions: the visible attributes, then every concern dimension as a satisfied or violated
   phrase (drawn among the domain's phrasings) in a per-option order.
7. The eleven are shuffled into option ids 1..11.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.hear2act.scenarios.domain_schema import ConcernDimension, DomainSchema
from hear_gym.envs.hear2act.scenarios.model import (
    CONCERN_LEVELS,
    Budget,
    Candidate,
    Concern,
    Persona,
    Scenario,
)

GENERATOR_VERSION = "hear2act-gen-2"

BUDGET_QUANTILE = {"low": 0.45, "mid": 0.65, "high": 0.85}
RATING_RANGE = (3.4, 4.7)  # everyone but the opening; the opening rates strictly higher
FEASIBLE_ROWS = 5  # in-budget options meeting L1
INFEASIBLE_ROWS = 4  # in-budget options missing L1, the opening among them
OVER_BUDGET = 2
STRONG_SIZE, MODERATE_SIZE = 3, 2  # feasible rows meeting a strong / moderate column
# The three ways to split the four infeasible rows into two pairs.
INFEASIBLE_SPLITS = (((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2)))

Design = tuple[frozenset[int], ...]


@dataclass(eq=False)
class _Row:
    """One option while it is being built: the dimensions it meets and its visible side."""

    met: frozenset[str]
    in_budget: bool = True
    role: str = "pattern"
    satisfies: tuple[bool, bool, bool] = (False, False, False)
    price: float = 0.0
    rating: float = 0.0


def scenario_id(domain_id: str, seed_index: int) -> str:
    return f"{domain_id}-{seed_index:02d}"


def consistent_pairs(columns: Design) -> list[tuple[int, int]]:
    """(strong, moderate) column indices that can be (L2, L3): they share one feasible row."""
    strong = [i for i, c in enumerate(columns) if len(c) == STRONG_SIZE]
    moderate = [i for i, c in enumerate(columns) if len(c) == MODERATE_SIZE]
    return [(s, m) for s in strong for m in moderate if len(columns[s] & columns[m]) == 1]


@cache
def balanced_designs(n_columns: int) -> tuple[Design, ...]:
    """Every design of ``n_columns`` distinct strong and moderate columns over the feasible rows
    in which each feasible row is the gold (shared row) of equally many consistent pairs."""
    rows = range(FEASIBLE_ROWS)
    strong = [frozenset(c) for c in itertools.combinations(rows, STRONG_SIZE)]
    moderate = [frozenset(c) for c in itertools.combinations(rows, MODERATE_SIZE)]
    # The gold row of each (strong, moderate) column pair, or None when they cannot be (L2, L3).
    shared = [[next(iter(s & m)) if len(s & m) == 1 else None for m in moderate] for s in strong]
    designs = []
    for k in range(1, n_columns):
        for strongs in itertools.combinations(range(len(strong)), k):
            for moderates in itertools.combinations(range(len(moderate)), n_columns - k):
                golds = [0] * FEASIBLE_ROWS
                for s in strongs:
                    for m in moderates:
                        if shared[s][m] is not None:
                            golds[shared[s][m]] += 1
                if golds[0] > 0 and golds.count(golds[0]) == FEASIBLE_ROWS:
                    designs.append(tuple(strong[s] for s in strongs) + tuple(moderate[m] for m in moderates))
    if not designs:
        raise ValueError(f"no balanced design with {n_columns} columns")
    return tuple(designs)


def generate_scenario(domain: DomainSchema, seed_index: int) -> Scenario:
    if not 0 <= seed_index < len(domain.seeds):
        raise ValueError(f"{domain.domain_id} has seeds 0..{len(domain.seeds) - 1}, not {seed_index}")
    rng = StableRng(f"{GENERATOR_VERSION}/{domain.domain_id}/{seed_index}")
    seed = domain.seeds[seed_index]

    dims = list(domain.concern_dimensions)
    l1 = dims.pop(rng.below(len(dims)))
    dims = rng.shuffled(dims)
    design = rng.choice(balanced_designs(len(dims)))
    strong_split, moderate_split = rng.sample(INFEASIBLE_SPLITS, 2)
    infeasible_met = [
        frozenset(rng.choice(strong_split if len(column) == STRONG_SIZE else moderate_split))
        for column in design
    ]
    l2_index, l3_index = rng.choice(consistent_pairs(design))
    hidden = (l1, dims[l2_index], dims[l3_index])
    concerns = tuple(
        Concern(level=level, attribute=dim.key, requirement=rng.choice(dim.requirements))
        for level, dim in zip(CONCERN_LEVELS, hidden, strict=True)
    )

    price = domain.price
    cap = _round_price(price.min + BUDGET_QUANTILE[seed.budget_tier] * (price.max - price.min))
    budget = Budget(max_price=cap, unit=price.unit)

    rows = [
        _Row(frozenset({l1.key} | {d.key for d, c in zip(dims, design, strict=True) if r in c}))
        for r in range(FEASIBLE_ROWS)
    ]
    infeasible = [
        _Row(frozenset(d.key for d, c in zip(dims, infeasible_met, strict=True) if r in c))
        for r in range(INFEASIBLE_ROWS)
    ]
    over_budget = [
        _Row(
            frozenset(d.key for d in domain.concern_dimensions if rng.random() < 0.5),
            in_budget=False,
            role="violates_visible",
        )
        for _ in range(OVER_BUDGET)
    ]
    rows += infeasible + over_budget
    for row in rows:
        row.satisfies = tuple(c.attribute in row.met for c in concerns)
    rng.choice(
        [row for row in rows[:FEASIBLE_ROWS] if row.satisfies == (True, True, False)]
    ).role = "safe_alternative"
    opening_row = rng.choice(infeasible)

    _assign_visible_stats(rng, rows, opening_row, price.min, cap)
    names = _names(rng, domain, len(rows))
    order = rng.shuffled(range(len(rows)))

    candidates = []
    for option_id, index in enumerate(order, start=1):
        row = rows[index]
        candidates.append(
            Candidate(
                option_id=option_id,
                name=names[index],
                price=row.price,
                rating=row.rating,
                description=_describe(rng, domain, row.met),
                satisfies=row.satisfies,
                role=row.role,
            )
        )
    gold = next(c.option_id for c in candidates if c.role == "pattern" and c.fully_satisfying)
    opening = order.index(rows.index(opening_row)) + 1
    return Scenario(
        scenario_id=scenario_id(domain.domain_id, seed_index),
        domain=domain.domain_id,
        family=domain.family,
        seed_index=seed_index,
        persona=Persona(**seed.model_dump(exclude={"request"})),
        request=seed.request.replace("{budget}", budget.phrase()),
        budget=budget,
        concerns=concerns,
        candidates=tuple(candidates),
        gold_option=gold,
        opening_option=opening,
        generator_version=GENERATOR_VERSION,
    )


def _round_price(value: float) -> float:
    return float(round(value)) if value >= 10 else round(value, 2)


def _assign_visible_stats(
    rng: StableRng, rows: list[_Row], opening: _Row, price_min: float, cap: float
) -> None:
    others = [row for row in rows if row is not opening]
    floor = price_min * 1.15  # leaves room below for the opening to be strictly cheapest
    for row in others:
        low, high = (floor, cap) if row.in_budget else (1.15 * cap, 1.6 * cap)
        row.price = _round_price(rng.uniform(low, high))
        row.rating = round(rng.uniform(*RATING_RANGE), 1)
    cheapest_other = min(row.price for row in others)
    price = _round_price(rng.uniform(price_min, cheapest_other * 0.97))
    if price >= cheapest_other:  # rounding can erase the gap on small prices
        price = _round_price(cheapest_other - (1 if cheapest_other >= 11 else 0.01))
    opening.price = price
    opening.rating = round(min(5.0, max(row.rating for row in others) + rng.choice((0.1, 0.2))), 1)


def _names(rng: StableRng, domain: DomainSchema, count: int) -> list[str]:
    combos = [
        f"{a} {b}"
        for a in domain.name_parts.first
        for b in domain.name_parts.second
        if a.lower() != b.lower()
    ]
    return rng.sample(combos, count)


def _describe(rng: StableRng, domain: DomainSchema, met: set[str]) -> str:
    visible = " ".join(f"{a.label.capitalize()}: {rng.choice(a.values)}." for a in domain.visible_attributes)
    features = [_phrase(rng, dim, dim.key in met) for dim in rng.shuffled(domain.concern_dimensions)]
    return f"{visible} Offers {'; '.join(features[:-1])}; and {features[-1]}."


def _phrase(rng: StableRng, dim: ConcernDimension, met: bool) -> str:
    return rng.choice(dim.satisfied if met else dim.violated)
