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
        return set(_reading(self.domain).mentioned(text))

    def features(self, description: str) -> dict[str, bool]:
        """How an option fares on each dimension its description mentions."""
        return dict(_reading(self.domain).described(description))


class _Reading:
    """A domain's phrases lowered once, and what each text read said: a grid's episodes read the
    same user lines and option descriptions thousands of times (kept up to ``KEPT_TEXTS`` each)."""

    KEPT_TEXTS = 65_536

    def __init__(self, domain: DomainSchema) -> None:
        self.domain = domain
        self._phrases = tuple(
            (d.key, tuple(p.lower() for p in (*d.requirements, *d.directions)))
            for d in domain.concern_dimensions
        )
        self._mentioned: dict[str, frozenset[str]] = {}
        self._described: dict[str, dict[str, bool]] = {}
        self.views: dict[str, DialogueView] = {}  # by transcript (``DialogueView.parse``)

    def mentioned(self, text: str) -> frozenset[str]:
        found = self._mentioned.get(text)
        if found is None:
            lowered = text.lower()
            found = frozenset(key for key, phrases in self._phrases if any(p in lowered for p in phrases))
            self._mentioned = _kept(self._mentioned, self.KEPT_TEXTS)
            self._mentioned[text] = found
        return found

    def described(self, description: str) -> dict[str, bool]:
        found = self._described.get(description)
        if found is None:
            self._described = _kept(self._described, self.KEPT_TEXTS)
            found = self._described[description] = self.domain.described(description)
        return found


KEPT_VIEWS = 4_096  # transcripts are a few kB each


def _kept(memo: dict, limit: int) -> dict:
    return memo if len(memo) < limit else {}


_READINGS: dict[str, _Reading] = {}


def _reading(domain: DomainSchema) -> _Reading:
    """The process's ``_Reading`` of ``domain`` (rebuilt if another schema object takes its id)."""
    reading = _READINGS.get(domain.domain_id)
    if reading is None or reading.domain is not domain:
        reading = _READINGS[domain.domain_id] = _Reading(domain)
    return reading


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
        """The view of ``transcript``; kept per process for the last ``KEPT_VIEWS`` transcripts
        read (the conditions of a grid that play the same dialogue read the same transcripts)."""
        reading = _reading(lexicon.domain)
        view = reading.views.get(transcript)
        if view is None:
            reading.views = _kept(reading.views, KEPT_VIEWS)
            view = reading.views[transcript] = cls._parse(transcript, lexicon)
        return view

    @classmethod
    def _parse(cls, transcript: str, lexicon: Lexicon) -> DialogueView:
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
