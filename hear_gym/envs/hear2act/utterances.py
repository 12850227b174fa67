"""Everything a scenario's user can say, to render ahead of training (``hear-gym render --turns
all``).

A user's turn is fixed by the reaction the engine chooses, then a text and a delivery label drawn
from the episode's generator. The reactions are few: to recommending each option with each set of
concerns already disclosed, and, with each option current in each state it can be in, to every
question, clarification, confirmation and invalid action (and to running out of patience, when
the user has some). Their texts are the realizer's frames with each direction
(``Wording.every_realization``) and their deliveries the labels of their state, so the set is
exact: every turn any policy can hear in the scenario is in it, and nothing else.
"""

from __future__ import annotations

import itertools

from hear_gym.envs.hear2act.actions import AssistantKind
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.model import CONCERN_LEVELS, Scenario
from hear_gym.envs.hear2act.user.engine import (
    ActionKind,
    AssistantAction,
    DialogueState,
    Reaction,
    ReactionKind,
    UserEngine,
)
from hear_gym.envs.hear2act.user.realizer import Wording
from hear_gym.envs.hear2act.user.states import DELIVERY_LABELS, REQUEST_DELIVERY, Feedback

_DISCLOSED = tuple(
    frozenset(levels)
    for n in range(len(CONCERN_LEVELS) + 1)
    for levels in itertools.combinations(CONCERN_LEVELS, n)
)


def possible_reactions(
    engine: UserEngine, attributes: tuple[str, ...], assistant: AssistantKind
) -> set[Reaction]:
    """Every reaction the engine can give in its scenario, stripped of what does not reach the
    user's words or voice (disclosure and the user-side states)."""
    found: set[Reaction] = set()
    moves = [AssistantAction(ActionKind.ASK, attribute=a) for a in attributes]
    moves += [AssistantAction(ActionKind.ASK), AssistantAction(ActionKind.CONFIRM)]
    if assistant is AssistantKind.TEXT:
        moves.append(AssistantAction(ActionKind.CLARIFY))
    for option in range(1, len(engine.scenario.candidates) + 1):
        for disclosed in _DISCLOSED:
            reaction = engine.react_to_recommendation(option, disclosed)
            found.add(_spoken(reaction))
            current = DialogueState(option, reaction.state, reaction.assents, disclosed=disclosed)
            for move in moves:
                found.add(_spoken(engine.respond(current, move)[1]))
            found.add(_spoken(engine.respond_invalid(current)[1]))
            if engine.patience is not None:
                found.add(Reaction(ReactionKind.OUT_OF_PATIENCE, reaction.state))
    return found


def _spoken(reaction: Reaction) -> Reaction:
    return Reaction(reaction.kind, reaction.state, level=reaction.level, attribute=reaction.attribute)


def possible_turns(
    scenario: Scenario,
    feedback: Feedback | str,
    patience: int | None = None,
    assistant: AssistantKind | str = AssistantKind.TEXT,
) -> list[tuple[str, str]]:
    """Every (text, delivery label) the scenario's user can say under ``feedback``, the opening
    request first, then sorted."""
    domain = domain_by_id(scenario.domain)
    engine = UserEngine(scenario, Feedback(feedback), patience)
    wording = Wording.of(scenario, domain)
    attributes = tuple(d.key for d in domain.concern_dimensions)
    turns = {
        (text, delivery)
        for reaction in possible_reactions(engine, attributes, AssistantKind(assistant))
        for text in wording.every_realization(reaction)
        for delivery in DELIVERY_LABELS[reaction.state]
    }
    opening = (scenario.request, REQUEST_DELIVERY)
    return [opening, *sorted(turns - {opening})]
