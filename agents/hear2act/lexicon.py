"""Reading Hear2Act observations with the domain's public vocabulary.

Rule agents know the domain schema (the words people use about flights, therapists, ...), as a
language model knows language; they do not know which three dimensions a scenario hides. All
parsing here works on observation text only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from hear_gym.envs.hear2act.scenarios.domain_schema import DomainSchema, load_domains

_OPTION_LINE = re.compile(r"^Option (\d+): (.+?) - \$([\d,]+(?:\.\d+)?) .*?, rated ([\d.]+)/5\. (.*)$")
_MONEY = re.compile(r"\$([\d,]+(?:\.\d+)?)")
_RECOMMENDED = re.compile(r"\[OPTION:\s*(\d+)\s*\]")


@dataclass(frozen=True)
class OptionView:
    option_id: int
    name: str
    price: float
    rating: float
    description: str


@cache
def domain_named(name: str) -> DomainSchema:
    for domain in load_domains():
        if domain.name == name:
            return domain
    raise KeyError(f"no domain named {name!r}")


def parse_options(options_text: str) -> tuple[OptionView, ...]:
    views = []
    for line in options_text.splitlines():
        match = _OPTION_LINE.match(line)
        if match is None:
            raise ValueError(f"unrecognised option line: {line[:80]!r}")
        oid, name, price, rating, description = match.groups()
        views.append(OptionView(int(oid), name, float(price.replace(",", "")), float(rating), description))
    return tuple(views)


@dataclass(frozen=True)
class Lexicon:
    domain: DomainSchema

    def mentioned(self, text: str) -> set[str]:
        """Concern dimensions whose requirement or direction phrases occur in ``text``."""
        lowered = text.lower()
        return {
            d.key
            for d in self.domain.concern_dimensions
            if any(p.lower() in lowered for p in (*d.requirements, *d.directions))
        }

    def features(self, description: str) -> dict[str, bool]:
        """How an option fares on each dimension its description mentions."""
        return self.domain.described(description)


@dataclass(frozen=True)
class DialogueView:
    """What the transcript so far says, as the rule agents read it."""

    budget: float | None
    stated_needs: frozenset[str]
    recommended: tuple[int, ...]
    last_assistant_kind: str | None
    user_lines: tuple[str, ...]  # the request first, then one reply per assistant line
    assistant_lines: tuple[str, ...]  # the opening recommendation first

    @classmethod
    def parse(cls, transcript: str, lexicon: Lexicon) -> DialogueView:
        user_lines, assistant_lines = [], []
        for line in transcript.splitlines():
            if line.startswith("User: "):
                user_lines.append(line[6:])
            elif line.startswith("Assistant: "):
                assistant_lines.append(line[11:])
        money = _MONEY.search(user_lines[0]) if user_lines else None
        needs: set[str] = set()
        for line in user_lines[1:]:
            needs |= lexicon.mentioned(line)
        recommended = tuple(
            int(m.group(1)) for line in assistant_lines for m in [_RECOMMENDED.search(line)] if m
        )
        last_kind = None
        if assistant_lines:
            tag = re.match(r"\[ACTION:\s*(\w+)", assistant_lines[-1])
            last_kind = tag.group(1).lower() if tag else None
        return cls(
            budget=float(money.group(1).replace(",", "")) if money else None,
            stated_needs=frozenset(needs),
            recommended=recommended,
            last_assistant_kind=last_kind,
            user_lines=tuple(user_lines),
            assistant_lines=tuple(assistant_lines),
        )
