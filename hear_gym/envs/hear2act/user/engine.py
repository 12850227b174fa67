"""Deterministic Hear2Act user engine (paper section 3.2, Appendix G.2, G.6, Table 12).

Given a scenario, the dialogue state and one assistant action, ``respond`` returns the new
state and a structured ``Reaction``: what the user does (``ReactionKind``), which concern it
concerns, the graded concern state, the user-side states and what becomes disclosed. It uses no
randomness; the delivery label and the words are drawn afterwards (``hear_gym.envs.hear2act.user.realizer``).

Rule table (``V`` = violates; "visible" = over the stated budget)

=================  ============================  ==============================  ==================  ======
recommend(o)       explicit lexical              prosody-mediated                graded state        assent
=================  ============================  ==============================  ==================  ======
o visible          names the broken budget       same                            rejection           no
o V L1             states the L1 requirement     same (hard stays explicit)      rejection [1] or    no
                   (discloses L1)                                                voiced concern
o V L2, meets L1   concern naming the L2         shared acceptance pool          explicit: voiced    expl. no
                   direction (discloses L2)                                      concern; prosody:   pros. yes
                                                                                 reluctant
o V only L3        assent + mild concern naming  shared acceptance pool          reluctant           yes
                   the L3 direction (discl. L3)
o meets all        enthusiastic acceptance       shared acceptance pool          genuine             yes
=================  ============================  ==============================  ==================  ======

[1] rejection when L1 was already disclosed (the assistant ignored a stated hard constraint)
    or the option also violates L2; voiced concern otherwise.

Other actions (the graded state of every non-recommendation turn is that of the user's last
reaction to the current option; its delivery is drawn anew):

* ``confirm``: ends the episode on the current option iff the user's last reaction to it assented
  in words; otherwise the user declines to commit and the dialogue goes on.
* ``ask(attribute)``: a concern attribute reveals that concern's requirement (disclosed); any
  other attribute gets "that doesn't matter much to me"; re-asking repeats the answer.
* ``ask()`` (general): reveals only the direction of the highest-priority concern the current
  option violates (disclosed), the budget if the option is over it, or that the user is happy.
* ``clarify`` (text assistants only), "does this option fully work for you?", on the current
  option o. Soft concerns stay implicit in the words under prosody-mediated feedback, exactly as
  in reactions, so clarify is no lexical oracle there:

  ==============  ===================================  ====================================
  clarify         explicit lexical                     prosody-mediated
  ==============  ===================================  ====================================
  o assented      in words: resolved ("yes, this one   shared acceptance pool, in the
                  really works") or not ("it doesn't   delivery of o's concern state
                  quite work for me yet")
  o not assented  in words: not resolved               same (the hard constraint or the
                                                       budget was already said in words)
  ==============  ===================================  ====================================

* an invalid action (malformed text, clarify for a spoken assistant, an attribute slot the
  domain does not have) consumes the turn; the user asks the assistant to rephrase.

User patience (an extension, not in the paper; off unless ``patience`` is set): an ask or a
clarify about the current option when the user has already accepted it genuinely (it meets every
concern) spends one unit of patience; when ``patience`` units are spent, the user ends the
dialogue on the current option in words ("let's just go with this one"), as a confirm would.

User-side states, per recommendation turn (all deterministic, never shown to the assistant):

* Option acceptance: positive = genuine, neutral = reluctant, negative = concern or rejection.
* Interaction satisfaction: annoyed when the option breaks a requirement the user has disclosed
  (the budget is disclosed from the start) or repeats an option the user rejected (negative
  acceptance); appreciative when it is a new option that respects everything disclosed *and* at
  least one hidden concern has been disclosed (the assistant has something to tailor to);
  neutral otherwise (e.g. a fresh option before any hidden concern is known, or re-recommending
  an option that was not rejected).

Disclosure: a concern counts as disclosed once its requirement or direction has been said in
words. The opening recommendation is standardized; it is part of the dialogue but not counted in
the per-recommendation rates (it is the same for every policy).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from hear_gym.envs.hear2act.scenarios.model import CONCERN_LEVELS, Scenario
from hear_gym.envs.hear2act.user.states import (
    ConcernState,
    Feedback,
    InteractionSatisfaction,
    OptionAcceptance,
)


class ActionKind(str, Enum):
    ASK = "ask"
    CLARIFY = "clarify"
    RECOMMEND = "recommend"
    CONFIRM = "confirm"


@dataclass(frozen=True)
class AssistantAction:
    """One assistant move. ``attribute`` (a concern-dimension key) makes an ask targeted."""

    kind: ActionKind
    option: int | None = None
    attribute: str | None = None

    def __post_init__(self) -> None:
        if (self.kind is ActionKind.RECOMMEND) != (self.option is not None):
            raise ValueError("recommend needs an option, other actions take none")
        if self.attribute is not None and self.kind is not ActionKind.ASK:
            raise ValueError("only ask takes an attribute")


class ReactionKind(str, Enum):
    REJECT_BUDGET = "reject_budget"
    STATE_REQUIREMENT = "state_requirement"  # L1 violated: hard constraint stated in words
    CONCERN_DIRECTION = "concern_direction"  # explicit: L2 direction, no assent
    ASSENT_MILD_CONCERN = "assent_mild_concern"  # explicit: assent + L3 direction
    GENUINE_ACCEPT = "genuine_accept"  # explicit: enthusiastic acceptance
    SHARED_ASSENT = "shared_assent"  # prosody: one phrase pool for every assent
    ANSWER_REQUIREMENT = "answer_requirement"
    ANSWER_NOT_IMPORTANT = "answer_not_important"
    ANSWER_DIRECTION = "answer_direction"
    ANSWER_BUDGET = "answer_budget"
    ANSWER_HAPPY = "answer_happy"
    CLARIFY_RESOLVED = "clarify_resolved"
    CLARIFY_UNRESOLVED = "clarify_unresolved"
    CONFIRM_ACCEPTED = "confirm_accepted"
    CONFIRM_DECLINED = "confirm_declined"
    OUT_OF_PATIENCE = "out_of_patience"  # the user ends the dialogue (patience extension)
    REPAIR = "repair"  # reply to an invalid action


@dataclass(frozen=True)
class Reaction:
    kind: ReactionKind
    state: ConcernState
    level: str | None = None  # the concern the words are about, if any
    attribute: str | None = None  # the attribute asked about, if any
    assents: bool = False
    disclosed: tuple[str, ...] = ()  # levels newly disclosed by this turn
    option_acceptance: OptionAcceptance | None = None  # recommendation turns only
    interaction_satisfaction: InteractionSatisfaction | None = None


@dataclass(frozen=True)
class DialogueState:
    """Everything the engine needs to know about the dialogue so far."""

    current_option: int
    current_state: ConcernState
    current_assented: bool
    disclosed: frozenset[str] = frozenset()
    recommended: tuple[int, ...] = ()
    rejected: frozenset[int] = frozenset()
    ended: bool = False
    patience_spent: int = 0  # asks and clarifies after a genuine acceptance (user patience)


@dataclass(frozen=True)
class UserEngine:
    scenario: Scenario
    feedback: Feedback
    patience: int | None = None  # None: the paper's user, who never runs out of patience
    _levels_of: dict[str, str] = field(init=False, repr=False, compare=False)
    _violated: dict[int, tuple[str, ...]] = field(init=False, repr=False, compare=False)
    _over_budget: frozenset[int] = field(init=False, repr=False, compare=False)
    # A reaction to a recommendation is immutable and fixed by the key ``_recommend`` builds, and
    # the opening by the scenario: each is built once (an env keeps its engines, so later
    # episodes find them too).
    _recommendations: dict[tuple, Reaction] = field(init=False, repr=False, compare=False)
    _opening: tuple[DialogueState, Reaction] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Per-option facts are fixed by the scenario; computing them once keeps steps cheap.
        object.__setattr__(self, "_recommendations", {})
        object.__setattr__(self, "_opening", None)
        scenario = self.scenario
        object.__setattr__(self, "_levels_of", {c.attribute: c.level for c in scenario.concerns})
        object.__setattr__(
            self,
            "_violated",
            {
                c.option_id: tuple(lvl for lvl, ok in zip(CONCERN_LEVELS, c.satisfies, strict=True) if not ok)
                for c in scenario.candidates
            },
        )
        object.__setattr__(
            self,
            "_over_budget",
            frozenset(c.option_id for c in scenario.candidates if c.price > scenario.budget.max_price),
        )

    # -- recommendation -------------------------------------------------------------------
    def violated_levels(self, option: int) -> tuple[str, ...]:
        return self._violated[option]

    def over_budget(self, option: int) -> bool:
        return option in self._over_budget

    def react_to_recommendation(self, option: int, disclosed: frozenset[str]) -> Reaction:
        violated = self.violated_levels(option)
        explicit = self.feedback is Feedback.EXPLICIT
        if self.over_budget(option):
            return Reaction(ReactionKind.REJECT_BUDGET, ConcernState.REJECTION)
        if "L1" in violated:
            harsh = "L1" in disclosed or "L2" in violated
            state = ConcernState.REJECTION if harsh else ConcernState.VOICED_CONCERN
            return Reaction(ReactionKind.STATE_REQUIREMENT, state, level="L1", disclosed=("L1",))
        if "L2" in violated:
            if explicit:
                return Reaction(
                    ReactionKind.CONCERN_DIRECTION, ConcernState.VOICED_CONCERN, level="L2", disclosed=("L2",)
                )
            return Reaction(ReactionKind.SHARED_ASSENT, ConcernState.RELUCTANT_ACCEPTANCE, assents=True)
        if "L3" in violated:
            if explicit:
                return Reaction(
                    ReactionKind.ASSENT_MILD_CONCERN,
                    ConcernState.RELUCTANT_ACCEPTANCE,
                    level="L3",
                    assents=True,
                    disclosed=("L3",),
                )
            return Reaction(ReactionKind.SHARED_ASSENT, ConcernState.RELUCTANT_ACCEPTANCE, assents=True)
        kind = ReactionKind.GENUINE_ACCEPT if explicit else ReactionKind.SHARED_ASSENT
        return Reaction(kind, ConcernState.GENUINE_ACCEPTANCE, assents=True)

    def interaction_satisfaction(self, option: int, state: DialogueState) -> InteractionSatisfaction:
        breaks_disclosed = self.over_budget(option) or any(
            level in state.disclosed for level in self.violated_levels(option)
        )
        if breaks_disclosed or option in state.rejected:
            return InteractionSatisfaction.ANNOYED
        if option not in state.recommended and state.disclosed:
            return InteractionSatisfaction.APPRECIATIVE
        return InteractionSatisfaction.NEUTRAL

    # -- the dialogue ---------------------------------------------------------------------
    def open(self) -> tuple[DialogueState, Reaction]:
        """The standardized opening: the surface-attractive option, recommended first."""
        if self._opening is None:
            object.__setattr__(self, "_opening", self._open())
        return self._opening

    def _open(self) -> tuple[DialogueState, Reaction]:
        start = DialogueState(
            current_option=self.scenario.opening_option,
            current_state=ConcernState.RELUCTANT_ACCEPTANCE,
            current_assented=False,
        )
        state, reaction = self._recommend(
            start, AssistantAction(ActionKind.RECOMMEND, option=self.scenario.opening_option)
        )
        # The opening is nobody's tailored choice and not a repeat: neutral by definition.
        return state, replace(reaction, interaction_satisfaction=InteractionSatisfaction.NEUTRAL)

    def respond(self, state: DialogueState, action: AssistantAction) -> tuple[DialogueState, Reaction]:
        if state.ended:
            raise RuntimeError("the dialogue has ended; reset before acting again")
        if self._tries_patience(state, action):
            state = replace(state, patience_spent=state.patience_spent + 1)
            if state.patience_spent >= self.patience:
                return (
                    replace(state, ended=True),
                    Reaction(ReactionKind.OUT_OF_PATIENCE, state.current_state, assents=True),
                )
        handler = _HANDLERS[action.kind]
        return handler(self, state, action)

    def _tries_patience(self, state: DialogueState, action: AssistantAction) -> bool:
        return (
            self.patience is not None
            and action.kind in (ActionKind.ASK, ActionKind.CLARIFY)
            and state.current_state is ConcernState.GENUINE_ACCEPTANCE
        )

    def respond_invalid(self, state: DialogueState) -> tuple[DialogueState, Reaction]:
        return state, Reaction(ReactionKind.REPAIR, state.current_state)

    def _recommend(self, state: DialogueState, action: AssistantAction):
        option = action.option
        key = (option, state.disclosed, option in state.rejected, option in state.recommended)
        reaction = self._recommendations.get(key)
        if reaction is None:
            reaction = self._recommendations[key] = self._recommendation(option, state)
        rejected = state.rejected
        if reaction.option_acceptance is OptionAcceptance.NEGATIVE:
            rejected = rejected | {option}
        new_state = DialogueState(
            current_option=option,
            current_state=reaction.state,
            current_assented=reaction.assents,
            disclosed=state.disclosed.union(reaction.disclosed) if reaction.disclosed else state.disclosed,
            recommended=state.recommended + (option,),
            rejected=rejected,
        )
        return new_state, reaction

    def _recommendation(self, option: int, state: DialogueState) -> Reaction:
        """The reaction to recommending ``option`` in ``state``, which reads of ``state`` only
        what ``_recommend``'s key holds: what is disclosed, whether ``option`` was rejected and
        whether it was recommended before."""
        base = self.react_to_recommendation(option, state.disclosed)
        return Reaction(
            base.kind,
            base.state,
            level=base.level,
            assents=base.assents,
            disclosed=tuple(lvl for lvl in base.disclosed if lvl not in state.disclosed),
            option_acceptance=OptionAcceptance.of(base.state),
            interaction_satisfaction=self.interaction_satisfaction(option, state),
        )

    def _confirm(self, state: DialogueState, action: AssistantAction):
        if state.current_assented:
            return (
                replace(state, ended=True),
                Reaction(ReactionKind.CONFIRM_ACCEPTED, state.current_state, assents=True),
            )
        return state, Reaction(ReactionKind.CONFIRM_DECLINED, state.current_state)

    def _ask(self, state: DialogueState, action: AssistantAction):
        if action.attribute is not None:
            level = self._levels_of.get(action.attribute)
            if level is None:
                return state, Reaction(
                    ReactionKind.ANSWER_NOT_IMPORTANT, state.current_state, attribute=action.attribute
                )
            return self._disclose(state, ReactionKind.ANSWER_REQUIREMENT, level, action.attribute)
        if self.over_budget(state.current_option):
            return state, Reaction(ReactionKind.ANSWER_BUDGET, state.current_state)
        violated = self.violated_levels(state.current_option)
        if not violated:
            return state, Reaction(ReactionKind.ANSWER_HAPPY, state.current_state)
        return self._disclose(state, ReactionKind.ANSWER_DIRECTION, violated[0])

    def _clarify(self, state: DialogueState, action: AssistantAction):
        if self.feedback is Feedback.PROSODY and state.current_assented:
            return state, Reaction(ReactionKind.SHARED_ASSENT, state.current_state, assents=True)
        kind = (
            ReactionKind.CLARIFY_RESOLVED if state.current_state.resolved else ReactionKind.CLARIFY_UNRESOLVED
        )
        return state, Reaction(kind, state.current_state)

    @staticmethod
    def _disclose(state: DialogueState, kind: ReactionKind, level: str, attribute: str | None = None):
        """A question answered with a concern's words; ``disclosed`` lists only what is new."""
        reaction = Reaction(
            kind,
            state.current_state,
            level=level,
            attribute=attribute,
            disclosed=() if level in state.disclosed else (level,),
        )
        if reaction.disclosed:
            state = replace(state, disclosed=state.disclosed | {level})
        return state, reaction


_HANDLERS = {
    ActionKind.RECOMMEND: UserEngine._recommend,
    ActionKind.CONFIRM: UserEngine._confirm,
    ActionKind.ASK: UserEngine._ask,
    ActionKind.CLARIFY: UserEngine._clarify,
}
