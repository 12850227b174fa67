"""Reading Hear2Act observations with the domain's public vocabulary.

Rule agents know the domain schema (the words people use about flights, therapists, ...), as a
language model knows language; they do not know which three dimensions a scenario hides. All
parsing here works on observation text only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

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

    def option_table(
        self, options_text: str
    ) -> tuple[tuple[OptionView, ...], Mapping[int, Mapping[str, bool]]]:
        """(``parse_options(options_text)``, option id -> its ``features``), read-only and kept
        per options text: every condition of a grid plays each scenario's option list."""
        reading = _reading(self.domain)
        table = reading.option_tables.get(options_text)
        if table is None:
            options = parse_options(options_text)
            features = {o.option_id: MappingProxyType(self.features(o.description)) for o in options}
            reading.option_tables = _kept(reading.option_tables, _Reading.KEPT_TEXTS)
            table = reading.option_tables[options_text] = (options, MappingProxyType(features))
        return table


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
        self.option_tables: dict[str, tuple] = {}  # by options text (``Lexicon.option_table``)

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
_NEW_EXCHANGE = "\nAssistant: "  # where a step's lines start in a transcript


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
        read (the conditions of a grid that play the same dialogue read the same transcripts).
        A transcript whose earlier lines were read already (the previous step's) is read from
        its new lines on: the view is the same as a whole reading's (every part of it is a
        running sum over lines)."""
        reading = _reading(lexicon.domain)
        view = reading.views.get(transcript)
        if view is None:
            head, mark, tail = transcript.rpartition(_NEW_EXCHANGE)
            earlier = reading.views.get(head) if mark else None
            if earlier is not None:
                view = earlier._read(tail_lines=(mark[1:] + tail).splitlines(), lexicon=lexicon)
            else:
                view = cls._read(cls(None, frozenset(), (), None, (), ()), transcript.splitlines(), lexicon)
            reading.views = _kept(reading.views, KEPT_VIEWS)
            reading.views[transcript] = view
        return view

    def _read(self, tail_lines: list[str], lexicon: Lexicon) -> DialogueView:
        """This view with ``tail_lines``, the transcript's next lines, read."""
        user_lines, assistant_lines = list(self.user_lines), list(self.assistant_lines)
        for line in tail_lines:
            if line.startswith("User: "):
                user_lines.append(line[6:])
            elif line.startswith("Assistant: "):
                assistant_lines.append(line[11:])
        money = _MONEY.search(user_lines[0]) if user_lines else None
        needs = set(self.stated_needs)
        for line in user_lines[max(1, len(self.user_lines)) :]:
            needs |= lexicon.mentioned(line)
        recommended = self.recommended + tuple(
            int(m.group(1))
            for line in assistant_lines[len(self.assistant_lines) :]
            for m in [_RECOMMENDED.search(line)]
            if m
        )
        last_kind = None
        if assistant_lines:
            tag = re.match(r"\[ACTION:\s*(\w+)", assistant_lines[-1])
            last_kind = tag.group(1).lower() if tag else None
        return DialogueView(
            budget=float(money.group(1).replace(",", "")) if money else None,
            stated_needs=frozenset(needs),
            recommended=recommended,
            last_assistant_kind=last_kind,
            user_lines=tuple(user_lines),
            assistant_lines=tuple(assistant_lines),
        )
