import json
from collections import Counter

import pytest

from hear_gym.envs.hear2act.actions import ask_target
from hear_gym.envs.hear2act.scenarios.domain_schema import (
    DOMAIN_FAMILIES,
    DomainSchemaError,
    load_domains,
    parse_domain,
)


def test_all_48_table6_domains_in_their_families():
    domains = load_domains()
    assert len(domains) == 48
    counts = Counter(d.family for d in domains)
    assert counts == {
        "travel_events": 5,
        "home_property": 8,
        "finance_insurance": 9,
        "health_wellness": 7,
        "education_career": 5,
        "family_lifestyle": 6,
        "media_devices": 4,
        "professional_services": 4,
    }
    assert [d.domain_id for d in domains] == list(DOMAIN_FAMILIES)
    assert len({d.name for d in domains}) == 48


@pytest.mark.parametrize("domain", load_domains(), ids=lambda d: d.domain_id)
def test_targeted_question_about_each_dimension_finds_that_dimension(domain):
    for dim in domain.concern_dimensions:
        assert ask_target(f"How important is {dim.label} to you?", domain) == dim.key


@pytest.mark.parametrize("domain", load_domains(), ids=lambda d: d.domain_id)
def test_seeds_vary_situation(domain):
    for field in ("urgency", "budget_tier", "expertise"):
        assert len({getattr(s, field) for s in domain.seeds}) >= 2, field


def _airline_json():
    domain = next(d for d in load_domains() if d.domain_id == "budget_airline_tickets")
    return json.loads(domain.model_dump_json())


def test_schema_errors_name_the_problem():
    data = _airline_json()
    data["seeds"][0]["request"] = "no budget placeholder here"
    with pytest.raises(DomainSchemaError, match=r"(?s)x\.json.*\{budget\}"):
        parse_domain(json.dumps(data), "x.json")

    data = _airline_json()
    data["concern_dimensions"][1]["directions"][0] = data["concern_dimensions"][0]["requirements"][0] + " too"
    with pytest.raises(DomainSchemaError, match="occurs inside"):
        parse_domain(json.dumps(data), "x.json")

    data = _airline_json()
    data["concern_dimensions"] = data["concern_dimensions"][:5]
    with pytest.raises(DomainSchemaError, match="at least 6"):
        parse_domain(json.dumps(data), "x.json")

    with pytest.raises(DomainSchemaError, match="not valid JSON"):
        parse_domain("{", "x.json")
    with pytest.raises(DomainSchemaError, match="non-ASCII"):
        parse_domain(
            json.dumps(_airline_json()).replace("Sky", "Sk\u00fd", 1).replace("\\u00fd", "\u00fd"), "x.json"
        )
