"""Validated model of a domain schema file (``hear_gym/envs/hear2act/scenarios/domains/<domain_id>.json``).

A domain schema is public knowledge about a service domain: its visible attributes, the
vocabulary of concern dimensions a user *might* hold, and ten scenario seeds (paper Table 7).
Which three dimensions a scenario hides, and at which priority, is decided by the generator.

The realizer slots the phrases below into fixed sentence frames, so they carry grammar rules:

* ``requirements`` / ``directions``: lowercase noun phrases that read after "I need ..." and
  "What I really need is ..." (no final punctuation).
* ``satisfied`` / ``violated``: lowercase noun phrases listed in a candidate description.
* ``request``: the opening request; must contain ``{budget}``, which expands to an amount and
  the price unit, e.g. "$200 per ticket".
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

FAMILIES: dict[str, str] = {
    "travel_events": "Travel & Events",
    "home_property": "Home & Property",
    "finance_insurance": "Finance & Insurance",
    "health_wellness": "Health & Wellness",
    "education_career": "Education & Career",
    "family_lifestyle": "Family & Lifestyle",
    "media_devices": "Media & Devices",
    "professional_services": "Professional Services",
}

# Paper Table 6: the 48 SGD-seeded domains and their service families.
DOMAIN_FAMILIES: dict[str, str] = {
    **dict.fromkeys(
        [
            "budget_airline_tickets",
            "vacation_rental_properties",
            "restaurant_reservations",
            "concert_ticket_purchases",
            "wedding_venue_selection",
        ],
        "travel_events",
    ),
    **dict.fromkeys(
        [
            "home_cleaning_services",
            "home_renovation_contractors",
            "home_security_systems",
            "landscaping_contractors",
            "lawn_care_contractors",
            "solar_panel_installation",
            "kitchen_appliance_upgrades",
            "mattress_replacement",
        ],
        "home_property",
    ),
    **dict.fromkeys(
        [
            "credit_card_applications",
            "mortgage_lender_comparison",
            "investment_portfolio_allocation",
            "retirement_planning_advisors",
            "tax_preparation_services",
            "car_insurance_policies",
            "health_insurance_plans",
            "pet_insurance_policies",
            "business_insurance_coverage",
        ],
        "finance_insurance",
    ),
    **dict.fromkeys(
        [
            "dermatologist_appointments",
            "pediatrician_selection",
            "mental_health_therapists",
            "meditation_apps",
            "gym_membership_options",
            "fitness_tracker_devices",
            "prescription_eyeglasses",
        ],
        "health_wellness",
    ),
    **dict.fromkeys(
        [
            "college_major_selection",
            "online_coding_bootcamps",
            "language_learning_platforms",
            "professional_development_courses",
            "laptop_purchase_for_students",
        ],
        "education_career",
    ),
    **dict.fromkeys(
        [
            "childrens_daycare_centers",
            "dog_training_classes",
            "online_dating_platforms",
            "wine_club_memberships",
            "meal_delivery_subscriptions",
            "video_game_purchases",
        ],
        "family_lifestyle",
    ),
    **dict.fromkeys(
        [
            "cable_tv_packages",
            "streaming_service_subscriptions",
            "podcast_hosting_services",
            "smartphone_upgrades",
        ],
        "media_devices",
    ),
    **dict.fromkeys(
        [
            "legal_consultation_services",
            "auto_mechanic_services",
            "business_accounting_software",
            "freelance_graphic_designers",
        ],
        "professional_services",
    ),
}

MIN_CONCERN_DIMENSIONS = 6
MAX_CONCERN_DIMENSIONS = 8  # = the env's number of targeted-ask attribute slots
SEEDS_PER_DOMAIN = 10

Phrase = str


def _clean_phrases(values: list[str], what: str) -> list[str]:
    for value in values:
        if value != value.strip() or not value:
            raise ValueError(f"{what} phrase {value!r} has surrounding whitespace or is empty")
        if value[-1] in ".!?;":
            raise ValueError(f"{what} phrase {value!r} must not end with punctuation")
        if value[0].isupper() and not value.split()[0].isupper():
            raise ValueError(f"{what} phrase {value!r} must start lowercase (it is slotted mid-sentence)")
    if len(set(values)) != len(values):
        raise ValueError(f"{what} phrases repeat")
    return values


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PriceSpec(_Strict):
    unit: str = Field(min_length=1, description="e.g. 'per ticket', 'per month', 'one-time'")
    min: float = Field(gt=0)
    max: float

    @model_validator(mode="after")
    def _range(self) -> PriceSpec:
        if self.max < 2 * self.min:
            raise ValueError("price.max must be at least twice price.min to leave room for budget tiers")
        return self


class NameParts(_Strict):
    first: list[str] = Field(min_length=8)
    second: list[str] = Field(min_length=8)


class VisibleAttribute(_Strict):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str
    values: list[str] = Field(min_length=2)


class ConcernDimension(_Strict):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str = Field(min_length=3)
    ask_keywords: list[str] = Field(min_length=2)
    requirements: list[Phrase] = Field(min_length=2)
    directions: list[Phrase] = Field(min_length=2)
    satisfied: list[Phrase] = Field(min_length=2)
    violated: list[Phrase] = Field(min_length=2)

    @field_validator("requirements", "directions", "satisfied", "violated")
    @classmethod
    def _phrases(cls, values: list[str], info) -> list[str]:
        return _clean_phrases(values, info.field_name)

    @field_validator("ask_keywords")
    @classmethod
    def _keywords(cls, values: list[str]) -> list[str]:
        if any(v != v.lower().strip() or not v for v in values):
            raise ValueError("ask_keywords must be non-empty lowercase strings")
        return values


class ScenarioSeed(_Strict):
    situation: str = Field(min_length=10)
    urgency: Literal["low", "medium", "high"]
    budget_tier: Literal["low", "mid", "high"]
    expertise: Literal["novice", "intermediate", "expert"]
    life_context: str = Field(min_length=3)
    request: str

    @field_validator("request")
    @classmethod
    def _request(cls, value: str) -> str:
        if value.count("{budget}") != 1:
            raise ValueError("request must contain the placeholder {budget} exactly once")
        if any(ch in value.replace("{budget}", "") for ch in "{}"):
            raise ValueError("request has braces other than {budget}")
        return value


class DomainSchema(_Strict):
    domain_id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    family: str
    item_noun: str
    price: PriceSpec
    name_parts: NameParts
    visible_attributes: list[VisibleAttribute] = Field(min_length=1)
    concern_dimensions: list[ConcernDimension] = Field(
        min_length=MIN_CONCERN_DIMENSIONS, max_length=MAX_CONCERN_DIMENSIONS
    )
    seeds: list[ScenarioSeed] = Field(min_length=SEEDS_PER_DOMAIN, max_length=SEEDS_PER_DOMAIN)

    @model_validator(mode="after")
    def _consistency(self) -> DomainSchema:
        if self.family not in FAMILIES:
            raise ValueError(f"family {self.family!r} is not one of {sorted(FAMILIES)}")
        expected = DOMAIN_FAMILIES.get(self.domain_id)
        if expected is not None and expected != self.family:
            raise ValueError(f"domain {self.domain_id} belongs to family {expected}, not {self.family}")
        keys = [d.key for d in self.concern_dimensions]
        if len(set(keys)) != len(keys):
            raise ValueError("concern dimension keys repeat")
        _check_disjoint(self.concern_dimensions)
        return self

    def dimension(self, key: str) -> ConcernDimension:
        for dim in self.concern_dimensions:
            if dim.key == key:
                return dim
        raise KeyError(f"{self.domain_id} has no concern dimension {key!r}")

    def described(self, description: str) -> dict[str, bool]:
        """How an option fares on each dimension its description mentions (satisfied or
        violated phrase), read back with the domain's public phrasings."""
        lowered = description.lower()
        out = {}
        for dim in self.concern_dimensions:
            if any(p.lower() in lowered for p in dim.satisfied):
                out[dim.key] = True
            elif any(p.lower() in lowered for p in dim.violated):
                out[dim.key] = False
        return out


def _check_disjoint(dimensions: list[ConcernDimension]) -> None:
    """Agents read phrases back out of text, so no phrase may contain another one."""
    owners: list[tuple[str, str]] = []
    for dim in dimensions:
        for field in ("requirements", "directions", "satisfied", "violated"):
            owners += [(phrase.lower(), f"{dim.key}.{field}") for phrase in getattr(dim, field)]
    for phrase, owner in owners:
        for other, other_owner in owners:
            if owner != other_owner and phrase in other:
                raise ValueError(f"phrase {phrase!r} ({owner}) occurs inside {other!r} ({other_owner})")
    keyword_owner: dict[str, str] = {}
    for dim in dimensions:
        for keyword in dim.ask_keywords:
            for known, owner in keyword_owner.items():
                if owner != dim.key and (keyword in known or known in keyword):
                    raise ValueError(f"ask keyword {keyword!r} ({dim.key}) overlaps {known!r} ({owner})")
            keyword_owner[keyword] = dim.key


class DomainSchemaError(ValueError):
    """A domain schema file is missing or invalid; the message names the file and field."""


def parse_domain(text: str, source: str) -> DomainSchema:
    if not text.isascii():
        bad = next(ch for ch in text if not ch.isascii())
        raise DomainSchemaError(f"{source}: non-ASCII character {bad!r}; use plain ASCII punctuation")
    try:
        return DomainSchema.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise DomainSchemaError(f"{source}: not valid JSON ({exc})") from exc
    except ValidationError as exc:
        raise DomainSchemaError(f"{source}: {exc}") from exc


@cache
def load_domains() -> tuple[DomainSchema, ...]:
    """All packaged domain schemas, in Table 6 order."""
    folder = resources.files("hear_gym.envs.hear2act.scenarios") / "domains"
    domains = []
    for domain_id in DOMAIN_FAMILIES:
        entry = folder / f"{domain_id}.json"
        if not entry.is_file():
            raise DomainSchemaError(f"missing domain schema file domains/{domain_id}.json")
        domain = parse_domain(entry.read_text(encoding="utf-8"), f"domains/{domain_id}.json")
        if domain.domain_id != domain_id:
            raise DomainSchemaError(f"domains/{domain_id}.json declares domain_id {domain.domain_id!r}")
        domains.append(domain)
    return tuple(domains)


def domain_by_id(domain_id: str) -> DomainSchema:
    for domain in load_domains():
        if domain.domain_id == domain_id:
            return domain
    raise KeyError(f"unknown domain {domain_id!r}")
