"""What an episode of a scenario needs that the scenario alone fixes: the user engine, the
action mask, the option list and the attribute list. A reset used to rebuild them (a fifth of a
transcript step's time, amortized); ``ScenarioFacts`` builds them at a scenario's first episode
and keeps them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hear_gym.envs.hear2act.actions import AssistantKind, action_mask
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.model import Scenario, format_price
from hear_gym.envs.hear2act.user.engine import UserEngine
from hear_gym.envs.hear2act.user.states import Feedback

# Scenarios kept per env (a few kB each): the whole bank (480) and the twins a training run draws
# (``hidden_users="resample"``: a few per scenario).
KEPT_SCENARIOS = 4096


def options_text(scenario: Scenario) -> str:
    """The candidate list as the P6a prompt's {options_text}."""
    unit = scenario.budget.unit
    return "\n".join(
        f"Option {c.option_id}: {c.name} - {format_price(c.price)} {unit}, rated {c.rating:.1f}/5. "
        f"{c.description}"
        for c in scenario.candidates
    )


class Facts(NamedTuple):
    engine: UserEngine
    mask: np.ndarray  # shared: callers get copies
    options: str
    attributes: str


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
        facts = Facts(
            UserEngine(scenario, self.feedback, self.patience),
            action_mask(domain, self.assistant),
            options_text(scenario),
            "\n".join(f"{i}. {d.label}" for i, d in enumerate(domain.concern_dimensions)),
        )
        self._kept[id(scenario)] = (scenario, facts)
        return facts
