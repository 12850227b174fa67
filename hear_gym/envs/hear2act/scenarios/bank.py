"""The scenario bank: all 480 scenarios, their splits, and JSONL export / import.

Split rule (whole scenarios are held out, every domain appears in every split): within each
domain the ten seed indices are put in a fixed pseudo-random order keyed by the domain id; the
first two are ``test``, the next two ``dev``, the remaining six ``train`` (288 / 96 / 96).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from hear_gym.core.run_folder import write_text_atomic
from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.hear2act.scenarios.domain_schema import load_domains
from hear_gym.envs.hear2act.scenarios.generator import GENERATOR_VERSION, generate_scenario
from hear_gym.envs.hear2act.scenarios.model import Scenario

SPLITS = ("train", "dev", "test")
_SPLIT_SIZES = {"test": 2, "dev": 2}  # per domain; the rest is train


class BankFormatError(ValueError):
    """A scenario bank file is malformed; the message names the line and the field."""


@cache
def scenario_bank() -> tuple[Scenario, ...]:
    """All scenarios, domain by domain in Table 6 order, seeds in order."""
    return tuple(generate_scenario(domain, i) for domain in load_domains() for i in range(len(domain.seeds)))


@cache
def _by_id() -> dict[str, Scenario]:
    return {s.scenario_id: s for s in scenario_bank()}


def get_scenario(scenario_id: str) -> Scenario:
    try:
        return _by_id()[scenario_id]
    except KeyError:
        raise KeyError(
            f"unknown scenario id {scenario_id!r} (ids look like 'budget_airline_tickets-03')"
        ) from None


def split_of(domain_id: str, seed_index: int) -> str:
    order = StableRng(f"split/{domain_id}").shuffled(range(10))
    rank = order.index(seed_index)
    if rank < _SPLIT_SIZES["test"]:
        return "test"
    if rank < _SPLIT_SIZES["test"] + _SPLIT_SIZES["dev"]:
        return "dev"
    return "train"


def scenarios_for(split: str | None = None, item_ids: Sequence[str] | None = None) -> tuple[Scenario, ...]:
    """Scenarios by explicit ids, or by split name ('train', 'dev', 'test', or 'all')."""
    if item_ids is not None:
        if split not in (None, "all"):
            raise ValueError("pass either split or item_ids, not both")
        if not item_ids:
            raise ValueError("item_ids is empty")
        return tuple(get_scenario(sid) for sid in item_ids)
    if split in (None, "all"):
        return scenario_bank()
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS + ('all',)}, got {split!r}")
    return _split_scenarios(split)


@cache  # envs and agents ask for a split's scenarios at every construction
def _split_scenarios(split: str) -> tuple[Scenario, ...]:
    return tuple(s for s in scenario_bank() if split_of(s.domain, s.seed_index) == split)


def write_bank(path: Path, scenarios: Iterable[Scenario]) -> int:
    """Write one scenario per line; returns the number written."""
    lines = [scenario.model_dump_json() + "\n" for scenario in scenarios]
    write_text_atomic(path, "".join(lines))
    return len(lines)


def read_bank(path: Path) -> list[Scenario]:
    """Load and validate a bank file; a bad line raises ``BankFormatError`` naming it."""
    scenarios: list[Scenario] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                scenario = Scenario.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise BankFormatError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(line)"
                raise BankFormatError(f"{path}:{lineno}: field {field}: {first['msg']}") from exc
            if scenario.scenario_id in seen:
                raise BankFormatError(f"{path}:{lineno}: duplicate scenario_id {scenario.scenario_id}")
            seen.add(scenario.scenario_id)
            scenarios.append(scenario)
    return scenarios


__all__ = [
    "GENERATOR_VERSION",
    "SPLITS",
    "BankFormatError",
    "get_scenario",
    "read_bank",
    "scenario_bank",
    "scenarios_for",
    "split_of",
    "write_bank",
]
