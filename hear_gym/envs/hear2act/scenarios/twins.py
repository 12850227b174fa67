"""Twin users: a scenario's visible world and L1 with another hidden (L2, L3).

The generator draws the hidden (L2, L3) as one of several "consistent pairs" of a strong and a
moderate column of the public satisfaction matrix, which the visible world makes equally likely
(``generator.py``, steps 2-3). Any other consistent pair gives a *twin*: the same request,
budget, options, voice and L1, and another user behind them, with its own gold. Twins are built
from the public matrix (read back from the option descriptions with the domain's phrasings,
checked against the scenario's own ``satisfies``) and validated as bank ``Scenario`` objects.

The env uses them two ways (``Hear2ActEnv``): ``reset(options={"hidden_user": ...})`` replays a
given twin (the assent pairs of ``agents.hear2act.assent_pairs``), and ``hidden_users="resample"``
draws a consistent user at every reset of the training split, so that a policy cannot learn
each training scenario's gold by heart.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

from hear_gym.envs.hear2act.scenarios.bank import get_scenario
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.model import Concern, Scenario

STRONG_SIZE, MODERATE_SIZE = 3, 2  # feasible options meeting a strong / moderate column


# -- the counterfactual user -------------------------------------------------------------------
@dataclass(frozen=True)
class HiddenUser:
    """The soft concerns of a twin user; L1 and everything visible are the scenario's."""

    l2: str
    l2_requirement: str
    l3: str
    l3_requirement: str


@cache
def public_matrix(scenario_id: str) -> dict[int, dict[str, bool]]:
    """Option -> concern dimension -> met, read back from the descriptions with the domain's
    public phrasings; checked against the scenario's own ``satisfies``."""
    scenario = get_scenario(scenario_id)
    domain = domain_by_id(scenario.domain)
    keys = {d.key for d in domain.concern_dimensions}
    matrix = {}
    for c in scenario.candidates:
        met = domain.described(c.description)
        if set(met) != keys or tuple(met[k.attribute] for k in scenario.concerns) != c.satisfies:
            raise ValueError(f"{scenario_id} option {c.option_id}: description does not read back")
        matrix[c.option_id] = met
    return matrix


def twin_concerns(scenario: Scenario, option: int, resolved: bool) -> list[tuple[str, str]]:
    """The (L2, L3) dimension pairs a twin could hide, with L1 kept, under which ``option`` is
    genuinely (``resolved``) or reluctantly accepted: consistent (strong, moderate) columns over
    the in-budget options meeting L1 (the generator's rule), whose one shared option is
    ``option`` or is not. The scenario's own pair is never among them (its state is the other)."""
    matrix = public_matrix(scenario.scenario_id)
    l1 = scenario.concerns[0].attribute
    feasible = {
        c.option_id
        for c in scenario.candidates
        if c.price <= scenario.budget.max_price and matrix[c.option_id][l1]
    }
    if option not in feasible:
        raise ValueError(f"option {option} of {scenario.scenario_id} does not meet L1 within budget")
    keys = [d.key for d in domain_by_id(scenario.domain).concern_dimensions if d.key != l1]
    columns = {k: frozenset(o for o in feasible if matrix[o][k]) for k in keys}
    strong = [k for k in keys if len(columns[k]) == STRONG_SIZE]
    moderate = [k for k in keys if len(columns[k]) == MODERATE_SIZE]
    return [
        (s, m)
        for s in strong
        for m in moderate
        if len(columns[s] & columns[m]) == 1 and (option in columns[s] & columns[m]) == resolved
    ]


@cache
def consistent_pairs(scenario_id: str) -> tuple[tuple[str, str], ...]:
    """Every (L2, L3) dimension pair the scenario's visible world makes as likely as its own
    (its own included), in a fixed order: each has exactly one in-budget option meeting L1, L2
    and L3, and together their golds cover the L1-feasible options."""
    scenario = get_scenario(scenario_id)
    matrix = public_matrix(scenario_id)
    l1 = scenario.concerns[0].attribute
    feasible = [
        c.option_id
        for c in scenario.candidates
        if c.price <= scenario.budget.max_price and matrix[c.option_id][l1]
    ]
    own = (scenario.concerns[1].attribute, scenario.concerns[2].attribute)
    return tuple(sorted({own} | {p for o in feasible for p in twin_concerns(scenario, o, resolved=True)}))


def draw_user(scenario_id: str, rng) -> HiddenUser:
    """A hidden user drawn uniformly among the consistent pairs, each requirement uniformly among
    its dimension's requirements (``rng``: a NumPy generator)."""
    scenario = get_scenario(scenario_id)
    pairs = consistent_pairs(scenario_id)
    l2, l3 = pairs[int(rng.integers(len(pairs)))]
    domain = domain_by_id(scenario.domain)
    r2, r3 = domain.dimension(l2).requirements, domain.dimension(l3).requirements
    return HiddenUser(l2, r2[int(rng.integers(len(r2)))], l3, r3[int(rng.integers(len(r3)))])


@lru_cache(maxsize=1024)
def twin_scenario(scenario_id: str, user: HiddenUser) -> Scenario:
    """The scenario with ``user``'s soft concerns: same id, request, budget, options and L1;
    satisfaction, gold and roles recomputed (the safe alternative is the first in-budget
    (T, T, F) option by id). Validated as a bank scenario."""
    if (user.l2, user.l3) not in consistent_pairs(scenario_id):
        raise ValueError(f"{user} is not a consistent twin of {scenario_id}")
    scenario = get_scenario(scenario_id)
    matrix = public_matrix(scenario_id)
    concerns = (
        scenario.concerns[0],
        Concern(level="L2", attribute=user.l2, requirement=user.l2_requirement),
        Concern(level="L3", attribute=user.l3, requirement=user.l3_requirement),
    )
    over = {c.option_id for c in scenario.candidates if c.price > scenario.budget.max_price}
    satisfies = {o: tuple(met[c.attribute] for c in concerns) for o, met in matrix.items()}
    safe = min(o for o, s in satisfies.items() if o not in over and s == (True, True, False))
    gold = [o for o, s in satisfies.items() if o not in over and all(s)]
    if len(gold) != 1:
        raise ValueError(f"{user} is not a consistent twin of {scenario_id}: golds {gold}")
    roles = {o: "violates_visible" if o in over else "pattern" for o in satisfies} | {
        safe: "safe_alternative"
    }
    candidates = [
        {**c.model_dump(), "satisfies": satisfies[c.option_id], "role": roles[c.option_id]}
        for c in scenario.candidates
    ]
    return Scenario.model_validate(
        {
            **scenario.model_dump(),
            "concerns": [c.model_dump() for c in concerns],
            "candidates": candidates,
            "gold_option": gold[0],
        }
    )
