"""What an episode of a scenario needs that the scenario alone fixes: the domain, the user engine,
the action mask, the option and attribute lists, the hidden concerns' record, the user's wording
(``Wording``) and each Discrete action's decoding and utterance. A reset used to rebuild them and a
step to decode, word and look up again (together about a third of a transcript step's time);
``ScenarioFacts`` builds them at a scenario's first episode and keeps them, one per process and
setting (``shared_scenario_facts``): a grid's envs, one per condition, play the same scenarios."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hear_gym.core.records import SharedRecord
from hear_gym.envs.hear2act.actions import (
    N_ACTIONS,
    AssistantKind,
    InvalidAction,
    action_mask,
    decode,
    utterance,
)
from hear_gym.envs.hear2act.scenarios.domain_schema import DomainSchema, domain_by_id
from hear_gym.envs.hear2act.scenarios.model import Scenario, format_price
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction, UserEngine
from hear_gym.envs.hear2act.user.realizer import Wording
from hear_gym.envs.hear2act.user.states import Feedback

# Scenarios kept per env (a few kB each): the whole bank (480) and the twins a training run draws
# (``hidden_users="resample"``: a few per scenario).
KEPT_SCENARIOS = 4096
INVALID_TEXT = "[INVALID]"  # the transcript's assistant line for an invalid action


def options_text(scenario: Scenario) -> str:
    """The candidate list as the P6a prompt's {options_text}."""
    unit = scenario.budget.unit
    return "\n".join(
        f"Option {c.option_id}: {c.name} - {format_price(c.price)} {unit}, rated {c.rating:.1f}/5. "
        f"{c.description}"
        for c in scenario.candidates
    )


class Move(NamedTuple):
    """A Discrete action decoded, and what the assistant says for it (``None`` for a confirm,
    whose words name the option current when it is played)."""

    action: AssistantAction | InvalidAction
    text: str | None


class Facts(NamedTuple):
    domain: DomainSchema
    engine: UserEngine
    mask: np.ndarray  # shared: callers get copies
    options: str
    attributes: str
    hidden_concerns: SharedRecord  # each episode gets its own copy
    wording: Wording
    moves: tuple[Move, ...]  # by Discrete index
    confirm_texts: tuple[str, ...]  # by option (1-based: index 0 unused)


class ScenarioFacts:
    """``Facts`` of a scenario under one env's feedback, patience and action set, kept by the
    scenario's identity (scenarios, twins included, are immutable; each entry holds its scenario,
    so an id is never reused while it is kept)."""

    def __init__(self, feedback: Feedback, patience: int | None, assistant: AssistantKind) -> None:
        self.feedback, self.patience, self.assistant = feedback, patience, assistant
        self._kept: dict[int, tuple[Scenario, Facts]] = {}

    def __call__(self, scenario: Scenario) -> Facts:
        kept = self._kept.get(id(scenario))
        if kept is not None and kept[0] is scenario:
            return kept[1]
        if len(self._kept) >= KEPT_SCENARIOS:
            self._kept.clear()
        domain = domain_by_id(scenario.domain)
        confirm = AssistantAction(ActionKind.CONFIRM)
        facts = Facts(
            domain,
            UserEngine(scenario, self.feedback, self.patience),
            action_mask(domain, self.assistant),
            options_text(scenario),
            "\n".join(f"{i}. {d.label}" for i, d in enumerate(domain.concern_dimensions)),
            SharedRecord([c.model_dump() for c in scenario.concerns]),
            Wording.of(scenario, domain),
            tuple(
                _move(decode(index, domain, self.assistant), scenario, domain) for index in range(N_ACTIONS)
            ),
            ("", *(utterance(confirm, scenario, domain, c.option_id) for c in scenario.candidates)),
        )
        self._kept[id(scenario)] = (scenario, facts)
        return facts


def _move(action: AssistantAction | InvalidAction, scenario: Scenario, domain: DomainSchema) -> Move:
    if isinstance(action, InvalidAction):
        return Move(action, INVALID_TEXT)
    if action.kind is ActionKind.CONFIRM:
        return Move(action, None)
    return Move(action, utterance(action, scenario, domain))


_SHARED: dict[tuple[Feedback, int | None, AssistantKind], ScenarioFacts] = {}


def shared_scenario_facts(
    feedback: Feedback, patience: int | None, assistant: AssistantKind
) -> ScenarioFacts:
    """This process's ``ScenarioFacts`` for one setting. Facts are immutable (the mask and the
    hidden concerns' record are handed out as copies; the engine's memo depends on its inputs
    only), so the envs of a process share them."""
    key = (feedback, patience, assistant)
    facts = _SHARED.get(key)
    if facts is None:
        facts = _SHARED[key] = ScenarioFacts(feedback, patience, assistant)
    return facts
