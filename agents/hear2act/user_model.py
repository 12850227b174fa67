"""The planner's model of a Hear2Act user: who the user could be, and what each would say.

Built from public knowledge only: the option list read with the domain's phrasings (every
description spells out every concern dimension, so the satisfaction matrix is public), the
generator's construction rules (``agents.hear2act.shortcuts.construction_users``) and the
engine's rule table as ``hear_gym.envs.hear2act.user.engine`` documents it. Never the bank, the
env, ``info`` or the engine itself.

A *user* is an (L1, L2, L3) triple of concern dimensions the construction allows, with its gold
(the in-budget option meeting all three); the generator draws the hidden pair uniformly among
the allowed ones, so the prior is uniform. To one assistant action on the current option each
user gives one ``Reaction``, as far as the transcript and a state channel can show it:

=================  ==============================================================================
recommend(o)       over budget: no dimension named; misses L1: names L1; otherwise, prosody: words
                   from the shared acceptance pool; explicit: names L2 if o misses it, else L3 if
                   o misses it, else a genuine acceptance (no dimension, not from the pool).
                   Graded state: over budget, rejection; misses L1, rejection when L1 was
                   disclosed before or o also misses L2, else voiced concern; misses L2 (L1
                   met), voiced concern (explicit) or reluctant acceptance (prosody); misses only
                   L3, reluctant acceptance; misses none, genuine acceptance
confirm            ends the episode iff the user's reaction to the current option assented
                   (in budget, meets L1, and under explicit feedback meets L2); else declines
ask(a)             names a iff a is one of the user's three dimensions (not modelled when a's label
                   itself reads as a need: the lexicon cannot tell the two replies apart)
ask()              names the first of L1, L2, L3 the current option misses; nothing when it misses
                   none or is over budget
clarify, invalid   not modelled (the planner uses neither): any reply is consistent
=================  ==============================================================================

The concern state is resolved (a genuine acceptance) iff the option the turn is about, the
recommended one or else the current one, is the user's gold. A turn that recommends nothing keeps
the graded state of the current option's last recommendation; a concern is disclosed once the
user's words have named it (by any reaction, including the opening's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from agents.hear2act.lexicon import DialogueView, Lexicon, domain_named
from agents.hear2act.shortcuts import OptionListView, construction_users
from hear_gym.envs.hear2act.actions import AssistantKind, InvalidAction, decode, encode, parse_p6a
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction
from hear_gym.envs.hear2act.user.realizer import SHARED_ACCEPTANCE_POOL
from hear_gym.envs.hear2act.user.states import ConcernState, Feedback

_POOL = frozenset(SHARED_ACCEPTANCE_POOL)


@dataclass(frozen=True)
class Reaction:
    named: str | None  # the concern dimension the words name, if any
    pooled: bool  # words from the shared acceptance pool
    ended: bool  # the user commits (an accepted confirm)
    resolved: bool  # the turn's concern state is a genuine acceptance
    grade: ConcernState | None  # a recommendation's graded state; None: the current option's


@dataclass(frozen=True)
class User:
    levels: tuple[str, str, str]  # the L1, L2 and L3 dimensions
    gold: int


@dataclass(frozen=True)
class StateChannel:
    """How a binary state channel's reading (``reads_resolved``: True or False) depends on the
    true state: heard as resolved with probability ``recall`` when it is, ``false_resolved`` when
    it is not. Exact at (1, 0)."""

    recall: float = 1.0
    false_resolved: float = 0.0
    graded: ClassVar[bool] = False
    readings: ClassVar[tuple[bool, ...]] = (True, False)

    def __post_init__(self) -> None:
        for name in ("recall", "false_resolved"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
                raise ValueError(f"state channel {name} must be a probability in [0, 1], got {value!r}")

    @property
    def exact(self) -> bool:
        return {self.recall, self.false_resolved} <= {0.0, 1.0}

    def likelihood(self, heard_resolved: bool, resolved: bool, grade: ConcernState) -> float:
        p = self.recall if resolved else self.false_resolved
        return p if heard_resolved else 1.0 - p


@dataclass(frozen=True)
class GradedStateChannel:
    """The ground-truth tag (T+S) read as the graded state its delivery label belongs to
    (``STATE_OF_LABEL``): exact, and it tells a rejection from a voiced concern from a reluctant
    acceptance, which a binary reading cannot."""

    graded: ClassVar[bool] = True
    exact: ClassVar[bool] = True
    readings: ClassVar[tuple[ConcernState, ...]] = tuple(ConcernState)

    def likelihood(self, heard: ConcernState, resolved: bool, grade: ConcernState) -> float:
        return float(heard is grade)


class UserModel:
    """The users one scenario's visible world allows, and their reactions under one feedback."""

    def __init__(self, view: OptionListView, lexicon: Lexicon, feedback: Feedback) -> None:
        self.view, self.lexicon, self.feedback = view, lexicon, feedback
        self.users = tuple(User(levels, gold) for levels, gold in construction_users(view, view.dimensions))
        self.over_budget = frozenset(o.option_id for o in view.options if o.price > view.budget)
        # A question about a dimension whose label reads as a need ("organic or low-sulfite
        # wines") gets a reply the lexicon cannot read either way; such asks are not modelled.
        self.unreadable = frozenset(
            d.key for d in lexicon.domain.concern_dimensions if lexicon.mentioned(d.label)
        )
        self._reactions: dict[tuple[int, int | None, bool], tuple[Reaction, ...]] = {}

    @classmethod
    def from_observation(cls, observation: dict[str, Any], feedback: Feedback) -> UserModel:
        view = OptionListView.from_observation(observation)
        lexicon = Lexicon(domain_named(observation["domain"]))
        # The view takes the current option for the opening; mid-dialogue the transcript knows.
        opening = DialogueView.parse(observation["transcript"], lexicon).recommended[0]
        return cls(replace(view, opening=opening), lexicon, feedback)

    def reactions(
        self, action: int, current: int | None, l1_disclosed: bool = False
    ) -> tuple[Reaction, ...] | None:
        """Each user's reaction to a Discrete action on ``current`` (every user's L1 disclosed
        before it, or none's); None when the words of the reply are not modelled."""
        decoded = self._decoded(action)
        if decoded is None or decoded.attribute in self.unreadable:
            return None
        return self._engine_reactions(action, current, l1_disclosed)

    def _decoded(self, action: int) -> AssistantAction | None:
        """The action, or None for one no user reacts to in a way the model follows."""
        decoded = decode(action, self.lexicon.domain, AssistantKind.TEXT)
        if isinstance(decoded, InvalidAction) or decoded.kind is ActionKind.CLARIFY:
            return None
        return decoded

    def _engine_reactions(
        self, action: int, current: int | None, l1_disclosed: bool
    ) -> tuple[Reaction, ...] | None:
        """Every user's reaction, readable words or not; None for clarify and invalid actions."""
        decoded = self._decoded(action)
        if decoded is None:
            return None
        disclosed = l1_disclosed and decoded.kind is ActionKind.RECOMMEND  # only there it matters
        key = (action, current, disclosed)
        if key not in self._reactions:
            self._reactions[key] = tuple(
                self._react(user, decoded, current, disclosed) for user in self.users
            )
        return self._reactions[key]

    def _react(
        self, user: User, action: AssistantAction, current: int | None, l1_disclosed: bool
    ) -> Reaction:
        if action.kind is ActionKind.RECOMMEND:
            named, pooled = self._recommendation_words(user, action.option)
            grade = self._grade(user, action.option, l1_disclosed)
            return Reaction(named, pooled, False, grade.resolved, grade)
        resolved = current == user.gold
        if action.kind is ActionKind.CONFIRM:
            return Reaction(None, False, self.assents(user, current), resolved, None)
        if action.attribute is not None:
            return Reaction(
                action.attribute if action.attribute in user.levels else None, False, False, resolved, None
            )
        missed = [] if current is None or current in self.over_budget else self.missed(user, current)
        return Reaction(missed[0] if missed else None, False, False, resolved, None)

    def _grade(self, user: User, option: int, l1_disclosed: bool) -> ConcernState:
        """The graded state of recommending ``option`` to ``user`` (the engine's rule table)."""
        if option in self.over_budget:
            return ConcernState.REJECTION
        missed = self.missed(user, option)
        l1, l2, _ = user.levels
        if l1 in missed:
            harsh = l1_disclosed or l2 in missed
            return ConcernState.REJECTION if harsh else ConcernState.VOICED_CONCERN
        if l2 in missed and self.feedback is Feedback.EXPLICIT:
            return ConcernState.VOICED_CONCERN
        return ConcernState.RELUCTANT_ACCEPTANCE if missed else ConcernState.GENUINE_ACCEPTANCE

    def missed(self, user: User, option: int) -> list[str]:
        """The user's dimensions ``option`` misses, in priority order."""
        return [level for level in user.levels if not self.view.features[option].get(level, False)]

    def _recommendation_words(self, user: User, option: int) -> tuple[str | None, bool]:
        if option in self.over_budget:
            return None, False
        missed = self.missed(user, option)
        if missed and missed[0] == user.levels[0]:
            return missed[0], False  # the hard constraint stays explicit under both feedbacks
        if self.feedback is Feedback.PROSODY:
            return None, True
        return (missed[0] if missed else None), False

    def assents(self, user: User, option: int | None) -> bool:
        """Whether the user's reaction to recommending ``option`` assented in words."""
        if option is None or option in self.over_budget:
            return False
        missed = self.missed(user, option)
        return user.levels[0] not in missed and not (
            self.feedback is Feedback.EXPLICIT and user.levels[1] in missed
        )

    def heard(self, line: str) -> tuple[frozenset[str], bool]:
        """What a reply shows: the dimensions its words name, and whether it is a pool phrase."""
        return frozenset(self.lexicon.mentioned(line)), line in _POOL

    def exchanges(self, dialogue: DialogueView) -> list[tuple[int | None, int | None, str]]:
        """The dialogue as (Discrete action or None if invalid, the current option before it,
        the user's reply), the opening recommendation first; assistant lines are read with the
        env's own P6a parser."""
        out, current = [], None
        for assistant, reply in zip(dialogue.assistant_lines, dialogue.user_lines[1:], strict=False):
            action = parse_p6a(assistant, self.lexicon.domain, AssistantKind.TEXT).action
            valid = not isinstance(action, InvalidAction)
            out.append((encode(action, self.lexicon.domain) if valid else None, current, reply))
            if valid and action.kind is ActionKind.RECOMMEND:
                current = action.option
        return out

    def posterior(
        self, dialogue: DialogueView, readings: Mapping[int, Any], channel: StateChannel | GradedStateChannel
    ) -> list[float]:
        """Unnormalized weights of the users given the dialogue's words (0 or 1) and the state
        channel's readings by turn (the opening's reply is turn 1)."""
        return self.belief(dialogue, readings, channel)[0]

    def belief(
        self, dialogue: DialogueView, readings: Mapping[int, Any], channel: StateChannel | GradedStateChannel
    ) -> tuple[list[float], frozenset[int]]:
        """``posterior``, and the users (indices) whose L1 the dialogue has disclosed."""
        n = len(self.users)
        weights, l1_disclosed = [1.0] * n, [False] * n
        grades: list[ConcernState | None] = [None] * n  # of the current option, per user
        for turn, (action, current, reply) in enumerate(self.exchanges(dialogue), start=1):
            readable = action is not None and self.reactions(action, current) is not None
            variants = (  # indexed by whether the user's L1 was disclosed before this turn
                (None, None)
                if action is None
                else tuple(self._engine_reactions(action, current, flag) for flag in (False, True))
            )
            heard = self.heard(reply)
            reading = readings.get(turn)
            for i, user in enumerate(self.users):
                reaction = None if variants[0] is None else variants[l1_disclosed[i]][i]
                if readable and not says(reaction, heard):
                    weights[i] = 0.0
                    continue
                if reaction is not None:
                    grades[i] = reaction.grade or grades[i]
                    l1_disclosed[i] = l1_disclosed[i] or reaction.named == user.levels[0]
                if reading is not None:
                    resolved = reaction.resolved if reaction is not None else current == user.gold
                    weights[i] *= channel.likelihood(reading, resolved, grades[i])
        return weights, frozenset(i for i, flag in enumerate(l1_disclosed) if flag)


def says(reaction: Reaction, heard: tuple[frozenset[str], bool]) -> bool:
    """Whether an observed reply (``UserModel.heard``) is what ``reaction`` would say."""
    named, pooled = heard
    if pooled != reaction.pooled or reaction.ended:
        return False  # a reply the agent observes never ended the episode
    return not named if reaction.named is None else reaction.named in named
