import hashlib
import subprocess
import sys
from collections import Counter

from agents.hear2act.lexicon import Lexicon
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id, load_domains
from hear_gym.envs.hear2act.scenarios.generator import (
    balanced_designs,
    consistent_pairs,
    generate_scenario,
)


def _bank_digest(bank) -> str:
    return hashlib.sha256("\n".join(s.model_dump_json() for s in bank).encode()).hexdigest()


def test_bank_has_480_scenarios_with_stable_unique_ids(bank):
    assert len(bank) == 480
    assert len({s.scenario_id for s in bank}) == 480
    assert Counter(s.domain for s in bank) == {d.domain_id: 10 for d in load_domains()}
    assert bank[0].scenario_id == "budget_airline_tickets-00"


def test_candidate_construction(bank):
    for s in bank:
        by_role = Counter(c.role for c in s.candidates)
        assert by_role == {"pattern": 8, "safe_alternative": 1, "violates_visible": 2}
        patterns = {c.satisfies for c in s.candidates if c.role == "pattern"}
        assert len(patterns) == 8
        gold, opening = s.candidate(s.gold_option), s.candidate(s.opening_option)
        assert gold.satisfies == (True, True, True)
        others = [c for c in s.candidates if c.option_id != s.gold_option]
        assert gold.price > min(c.price for c in others)  # never leads on price
        assert gold.rating < max(c.rating for c in others)  # never leads on rating
        rest = [c for c in s.candidates if c.option_id != s.opening_option]
        assert opening.price < min(c.price for c in rest) and opening.rating > max(c.rating for c in rest)
        assert not opening.satisfies[0] and opening.role == "pattern"  # attractive, yet misses L1
        assert len({c.name for c in s.candidates}) == 11
        over = [c for c in s.candidates if c.price > s.budget.max_price]
        assert {c.role for c in over} == {"violates_visible"} and len(over) == 2


def test_descriptions_agree_with_satisfaction_patterns(bank):
    for s in bank:
        lexicon = Lexicon(domain_by_id(s.domain))
        for c in s.candidates:
            features = lexicon.features(c.description)
            assert len(features) == len(lexicon.domain.concern_dimensions), c.description
            for concern, satisfied in zip(s.concerns, c.satisfies, strict=True):
                assert features[concern.attribute] is satisfied, (s.scenario_id, c.option_id)


def test_request_states_only_visible_requirements(bank):
    for s in bank:
        assert s.budget.phrase() in s.request
        lexicon = Lexicon(domain_by_id(s.domain))
        assert not lexicon.mentioned(s.request), s.scenario_id


def test_different_seeds_hide_different_concerns(bank):
    for domain in load_domains():
        triples = {tuple(c.attribute for c in s.concerns) for s in bank if s.domain == domain.domain_id}
        assert len(triples) >= 6, domain.domain_id
    assert len({tuple(c.attribute for c in s.concerns) for s in bank}) > 300


def test_generation_is_pure(bank):
    domain = load_domains()[5]
    assert generate_scenario(domain, 3) == generate_scenario(domain, 3)
    code = (
        "import hashlib; from hear_gym.envs.hear2act.scenarios.bank import scenario_bank; "
        "print(hashlib.sha256('\\n'.join(s.model_dump_json() for s in scenario_bank())"
        ".encode()).hexdigest())"
    )
    other_process = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other_process == _bank_digest(bank)


def test_opening_pattern_beyond_l1_varies(bank):
    openings = Counter(s.candidate(s.opening_option).satisfies for s in bank)
    assert set(openings) == {(False, l2, l3) for l2 in (True, False) for l3 in (True, False)}
    assert min(openings.values()) > 480 / 4 * 0.6


def test_balanced_designs_make_every_feasible_row_equally_likely_gold():
    for n_columns in (5, 6, 7):  # domains have 6-8 concern dimensions, one of them is L1
        designs = balanced_designs(n_columns)
        assert designs
        for design in designs:
            assert len(set(design)) == n_columns
            golds = Counter(next(iter(design[s] & design[m])) for s, m in consistent_pairs(design))
            assert sorted(golds) == [0, 1, 2, 3, 4] and len(set(golds.values())) == 1


def test_hidden_pair_is_one_of_the_consistent_decoy_pairs(bank):
    # Every dimension other than L1 is described the way an L2 or L3 could be, and more than one
    # (L2, L3) pair fits the construction in every scenario.
    for s in bank:
        lexicon = Lexicon(domain_by_id(s.domain))
        feasible = [c for c in s.candidates if c.role != "violates_visible" and c.satisfies[0]]
        assert len(feasible) == 5
        met = {
            d.key: sum(lexicon.features(c.description)[d.key] for c in feasible)
            for d in lexicon.domain.concern_dimensions
            if d.key != s.concerns[0].attribute
        }
        assert set(met.values()) == {2, 3}, s.scenario_id
        assert met[s.concerns[1].attribute] == 3 and met[s.concerns[2].attribute] == 2
