"""Deterministic Hear2Act scenario generator (paper section 3.1, Appendix A and G.1).

``generate_scenario(domain, seed_index)`` is a pure function of the generator version, the
domain schema and the seed index. Construction:

1. Hidden concerns: three distinct concern dimensions of the domain, drawn per seed, become
   L1 (hard constraint), L2 (strong preference) and L3 (moderate preference).
2. Budget: the seed's budget tier fixes a price cap inside the domain's price range; the
   opening request states it (the only visible requirement).
3. Candidates (11): the eight satisfaction patterns over (L1, L2, L3) once each, one safe
   alternative (meets L1 and L2, misses L3, middling price), and two options over budget
   (the first meets every hidden concern, a visible-requirement trap; the second is random).
4. Surface attractiveness: the opening option (pattern: misses L1, meets L2 and L3) is strictly
   the cheapest and strictly the best rated of all eleven, so the gold never leads on price or
   rating, and every rollout starts from an option that looks best but conflicts with a hidden
   need.
5. Descriptions mention every concern dimension of the domain (satisfied or violated phrase),
   in a per-candidate order; dimensions that are not hidden concerns get a fair coin. So the
   text shows how each option fares on every dimension without revealing which three matter.
6. The eleven are shuffled into option ids 1..11.
"""

from __future__ import annotations

import itertools

from hear_gym.scenarios.domain_schema import DomainSchema
from hear_gym.scenarios.model import (
    CONCERN_LEVELS,
    Budget,
    Candidate,
    Concern,
    Persona,
    Scenario,
)
from hear_gym.scenarios.stable_rng import StableRng

GENERATOR_VERSION = "hear2act-gen-1"

BUDGET_QUANTILE = {"low": 0.45, "mid": 0.65, "high": 0.85}
OPENING_PATTERN = (False, True, True)
SAFE_ALTERNATIVE_PATTERN = (True, True, False)
RATING_RANGE = (3.4, 4.7)  # everyone but the opening; the opening rates strictly higher


def scenario_id(domain_id: str, seed_index: int) -> str:
    return f"{domain_id}-{seed_index:02d}"


def generate_scenario(domain: DomainSchema, seed_index: int) -> Scenario:
    if not 0 <= seed_index < len(domain.seeds):
        raise ValueError(f"{domain.domain_id} has seeds 0..{len(domain.seeds) - 1}, not {seed_index}")
    rng = StableRng(f"{GENERATOR_VERSION}/{domain.domain_id}/{seed_index}")
    seed = domain.seeds[seed_index]

    hidden = rng.sample(domain.concern_dimensions, 3)
    concerns = tuple(
        Concern(level=level, attribute=dim.key, requirement=rng.choice(dim.requirements))
        for level, dim in zip(CONCERN_LEVELS, hidden, strict=True))

    price = domain.price
    cap = _round_price(price.min + BUDGET_QUANTILE[seed.budget_tier] * (price.max - price.min))
    budget = Budget(max_price=cap, unit=price.unit)

    specs = _candidate_specs(rng)
    _assign_visible_stats(rng, specs, price.min, cap)
    names = _names(rng, domain, len(specs))
    order = rng.shuffled(range(len(specs)))

    candidates = []
    for option_id, index in enumerate(order, start=1):
        spec = specs[index]
        candidates.append(Candidate(
            option_id=option_id,
            name=names[index],
            price=spec["price"],
            rating=spec["rating"],
            description=_describe(rng, domain, hidden, spec["satisfies"]),
            satisfies=spec["satisfies"],
            role=spec["role"],
        ))
    gold = next(c.option_id for c in candidates if c.role == "pattern" and c.fully_satisfying)
    opening = next(c.option_id for c in candidates
                   if c.role == "pattern" and c.satisfies == OPENING_PATTERN)
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


def _candidate_specs(rng: StableRng) -> list[dict]:
    patterns = list(itertools.product((True, False), repeat=3))
    specs = [{"satisfies": p, "role": "pattern"} for p in patterns]
    specs.append({"satisfies": SAFE_ALTERNATIVE_PATTERN, "role": "safe_alternative"})
    specs.append({"satisfies": (True, True, True), "role": "violates_visible"})
    specs.append({"satisfies": rng.choice(patterns), "role": "violates_visible"})
    return specs


def _round_price(value: float) -> float:
    return float(round(value)) if value >= 10 else round(value, 2)


def _assign_visible_stats(rng: StableRng, specs: list[dict], price_min: float, cap: float) -> None:
    opening = next(s for s in specs if s["role"] == "pattern" and s["satisfies"] == OPENING_PATTERN)
    others = [s for s in specs if s is not opening]
    floor = price_min * 1.15  # leaves room below for the opening to be strictly cheapest
    for spec in others:
        if spec["role"] == "violates_visible":
            spec["price"] = _round_price(cap * rng.uniform(1.15, 1.6))
        elif spec["role"] == "safe_alternative":
            spec["price"] = _round_price(rng.uniform(floor + 0.4 * (cap - floor), floor + 0.7 * (cap - floor)))
        else:
            spec["price"] = _round_price(rng.uniform(floor, cap))
        spec["rating"] = round(rng.uniform(*RATING_RANGE), 1)
    cheapest_other = min(s["price"] for s in others)
    price = _round_price(rng.uniform(price_min, cheapest_other * 0.97))
    if price >= cheapest_other:  # rounding can erase the gap on small prices
        price = _round_price(cheapest_other - (1 if cheapest_other >= 11 else 0.01))
    opening["price"] = price
    opening["rating"] = round(min(5.0, max(s["rating"] for s in others) + rng.choice((0.1, 0.2))), 1)


def _names(rng: StableRng, domain: DomainSchema, count: int) -> list[str]:
    combos = [f"{a} {b}" for a in domain.name_parts.first for b in domain.name_parts.second
              if a.lower() != b.lower()]
    return rng.sample(combos, count)


def _describe(rng: StableRng, domain: DomainSchema, hidden, satisfies: tuple[bool, bool, bool]) -> str:
    level_of = {dim.key: i for i, dim in enumerate(hidden)}
    visible = " ".join(f"{a.label.capitalize()}: {rng.choice(a.values)}." for a in domain.visible_attributes)
    features = []
    for dim in rng.shuffled(domain.concern_dimensions):
        met = satisfies[level_of[dim.key]] if dim.key in level_of else rng.random() < 0.5
        features.append(rng.choice(dim.satisfied if met else dim.violated))
    return f"{visible} Offers {'; '.join(features[:-1])}; and {features[-1]}."

