"""Hear2Act action set: the Discrete layout, encode/decode, masks, and the P6a text parser.

Discrete layout (``N_ACTIONS`` = 22, the same for every domain):

====== =====================================================================
index  action
====== =====================================================================
0      ask, general ("is anything about this option not right for you?")
1-8    ask, targeted at attribute slot 0-7 (the domain's concern dimensions in
       schema order; domains have 6-8, so the last slots may not exist)
9      clarify (text assistants only)
10-20  recommend option 1-11
21     confirm the current option
====== =====================================================================

Invalid actions do not crash: ``decode`` returns an ``InvalidAction`` with the reason, the env
consumes the turn, the user asks to rephrase, ``info["invalid_action"]`` holds the reason and
the step reward carries the env's ``invalid_action_penalty``. Invalid are: an attribute slot the
domain does not have, clarify for a spoken assistant, and unparseable text.

Text actions follow the paper's P6a card::

    [ACTION: RECOMMEND] [OPTION: <number>] <assistant utterance>
    [ACTION: ASK] <assistant utterance>
    [ACTION: CONFIRM] <assistant utterance>
    [ACTION: CLARIFY] <assistant utterance>        (text assistants)

The parser is strict: the reply must start with exactly one action tag (surrounding whitespace
is ignored), RECOMMEND must be followed directly by one ``[OPTION: n]`` with n in 1..11 written
in ASCII digits, and no further ``[ACTION:`` or ``[OPTION:`` tag may appear. Tag names and action
words are case-insensitive (``[action: recommend] [option: 3]`` is the same reply). An ASK is targeted when its question names
exactly one attribute of the domain (by its label or one of its ask keywords); a question that
names none, or several (the user cannot state everything at once), is a general question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import numpy as np

from hear_gym.envs.hear2act.scenarios.domain_schema import MAX_CONCERN_DIMENSIONS, DomainSchema
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES, Scenario, format_price
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction


class AssistantKind(str, Enum):
    TEXT = "text"  # ask, clarify, recommend, confirm
    SPOKEN = "spoken"  # ask, recommend, confirm


ASK_GENERAL = 0
ASK_SLOT0 = 1
CLARIFY = ASK_SLOT0 + MAX_CONCERN_DIMENSIONS
RECOMMEND0 = CLARIFY + 1
CONFIRM = RECOMMEND0 + N_CANDIDATES
N_ACTIONS = CONFIRM + 1


@dataclass(frozen=True)
class InvalidAction:
    reason: str


def decode(index: int, domain: DomainSchema, assistant: AssistantKind) -> AssistantAction | InvalidAction:
    index = int(index)
    if index == ASK_GENERAL:
        return AssistantAction(ActionKind.ASK)
    if ASK_SLOT0 <= index < CLARIFY:
        slot = index - ASK_SLOT0
        if slot >= len(domain.concern_dimensions):
            return InvalidAction(
                f"attribute slot {slot} does not exist in domain {domain.domain_id} "
                f"({len(domain.concern_dimensions)} slots)"
            )
        return AssistantAction(ActionKind.ASK, attribute=domain.concern_dimensions[slot].key)
    if index == CLARIFY:
        if assistant is AssistantKind.SPOKEN:
            return InvalidAction("clarify is not in the spoken assistant's action set")
        return AssistantAction(ActionKind.CLARIFY)
    if RECOMMEND0 <= index < CONFIRM:
        return AssistantAction(ActionKind.RECOMMEND, option=index - RECOMMEND0 + 1)
    if index == CONFIRM:
        return AssistantAction(ActionKind.CONFIRM)
    raise ValueError(f"action index {index} is outside 0..{N_ACTIONS - 1}")


def utterance(
    action: AssistantAction, scenario: Scenario, domain: DomainSchema, current_option: int | None = None
) -> str:
    """What the assistant says for ``action`` in ``scenario``, tags first, as the P6a card writes
    it (a confirm names the option current when it is played: ``current_option``)."""
    if action.kind is ActionKind.RECOMMEND:
        c = scenario.candidate(action.option)
        return (
            f"[ACTION: RECOMMEND] [OPTION: {c.option_id}] I recommend {c.name}, at "
            f"{format_price(c.price)} {scenario.budget.unit} with a {c.rating:.1f}/5 rating."
        )
    if action.kind is ActionKind.ASK:
        if action.attribute is None:
            return "[ACTION: ASK] Is there anything about this option that doesn't work for you?"
        return f"[ACTION: ASK] How important is {domain.dimension(action.attribute).label} to you?"
    if action.kind is ActionKind.CLARIFY:
        return "[ACTION: CLARIFY] Does this option fully work for you?"
    return f"[ACTION: CONFIRM] Great, I'll confirm {scenario.candidate(current_option).name} for you."


def encode(action: AssistantAction, domain: DomainSchema) -> int:
    if action.kind is ActionKind.ASK:
        if action.attribute is None:
            return ASK_GENERAL
        keys = [d.key for d in domain.concern_dimensions]
        return ASK_SLOT0 + keys.index(action.attribute)
    if action.kind is ActionKind.CLARIFY:
        return CLARIFY
    if action.kind is ActionKind.RECOMMEND:
        return RECOMMEND0 + action.option - 1
    return CONFIRM


def action_mask(domain: DomainSchema, assistant: AssistantKind) -> np.ndarray:
    """1 for actions valid in this domain and action set (use with masked policies)."""
    mask = np.ones(N_ACTIONS, dtype=np.int8)
    mask[ASK_SLOT0 + len(domain.concern_dimensions) : CLARIFY] = 0
    if assistant is AssistantKind.SPOKEN:
        mask[CLARIFY] = 0
    return mask


# -- P6a text ---------------------------------------------------------------------------
_ACTION_TAG = re.compile(r"^\s*\[ACTION:\s*(RECOMMEND|ASK|CONFIRM|CLARIFY)\s*\]", re.IGNORECASE)
_OPTION_TAG = re.compile(r"^\s*\[OPTION:\s*([0-9]{1,3})\s*\]", re.IGNORECASE)  # ASCII digits only
_ANY_TAG = re.compile(r"\[(ACTION|OPTION)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedText:
    action: AssistantAction | InvalidAction
    utterance: str  # the assistant's words after the tags


def parse_p6a(text: str, domain: DomainSchema, assistant: AssistantKind) -> ParsedText:
    if not isinstance(text, str):
        return ParsedText(InvalidAction(f"expected text, got {type(text).__name__}"), "")
    match = _ACTION_TAG.match(text)
    if match is None:
        return ParsedText(
            InvalidAction("reply does not start with [ACTION: RECOMMEND|ASK|CONFIRM|CLARIFY]"), text.strip()
        )
    kind = ActionKind(match.group(1).lower())
    rest = text[match.end() :]
    option = None
    if kind is ActionKind.RECOMMEND:
        opt = _OPTION_TAG.match(rest)
        if opt is None:
            return ParsedText(InvalidAction("RECOMMEND must be followed by [OPTION: <number>]"), rest.strip())
        option = int(opt.group(1))
        rest = rest[opt.end() :]
        if not 1 <= option <= N_CANDIDATES:
            return ParsedText(InvalidAction(f"option {option} is not in 1..{N_CANDIDATES}"), rest.strip())
    utterance = rest.strip()
    if _ANY_TAG.search(rest):
        return ParsedText(InvalidAction("more than one action or option tag"), utterance)
    if kind is ActionKind.CLARIFY and assistant is AssistantKind.SPOKEN:
        return ParsedText(InvalidAction("clarify is not in the spoken assistant's action set"), utterance)
    if kind is ActionKind.ASK:
        return ParsedText(AssistantAction(kind, attribute=ask_target(utterance, domain)), utterance)
    return ParsedText(AssistantAction(kind, option=option), utterance)


def parse_reply(env, reply: str) -> AssistantAction | InvalidAction:
    """P6a text -> the action of ``env`` (a ``Hear2ActEnv``: its domain and assistant kind); an
    ``InvalidAction`` for malformed text. ``TextActions`` calls it with the base env."""
    return parse_p6a(reply, env.domain, env.assistant).action


def ask_target(question: str, domain: DomainSchema) -> str | None:
    """The one attribute a question is about, or None for a general question.

    Labels and keywords match at a word start: stems work ("reliab" finds "reliable") and a
    keyword never matches inside another word ("irs" does not find "first")."""
    lowered = question.lower()
    hits = {key for key, pattern in _keyword_patterns(domain) if pattern.search(lowered)}
    return hits.pop() if len(hits) == 1 else None


_PATTERNS: dict[str, tuple[tuple[str, re.Pattern], ...]] = {}


def _keyword_patterns(domain: DomainSchema) -> tuple[tuple[str, re.Pattern], ...]:
    if domain.domain_id not in _PATTERNS:
        _PATTERNS[domain.domain_id] = tuple(
            (
                dim.key,
                re.compile(
                    r"\b(?:" + "|".join(re.escape(k) for k in (dim.label.lower(), *dim.ask_keywords)) + ")"
                ),
            )
            for dim in domain.concern_dimensions
        )
    return _PATTERNS[domain.domain_id]


def replay_replies(record: dict) -> list[str]:
    """Each assistant turn's P6a text (a Discrete run's record holds the text the env wrote for
    the action; an invalid turn's, when none, the untagged invalid reply), for ``hear-gym view``."""
    return [
        t["assistant_text"] if t["assistant_text"] is not None else "[ACTION: NONE]"
        for t in record["turns"][1:]
    ]
