"""The prosody-mediated assent turns of Hear2Act: the items on which the audio contrast is measured.

For each scenario of a split, the user's reaction (prosody-mediated feedback, nothing disclosed
yet) to every candidate option, kept when it is a ``SHARED_ASSENT``: words from the shared
acceptance pool, genuine (resolved) or reluctant (unresolved) acceptance. Items are selected
through the user engine, never through the bank's construction (option roles, satisfaction
patterns), so they follow whatever the engine considers an assent. Words and delivery label are
drawn as the env draws them (``realize``, then ``choose_delivery``) from one seeded generator.
``render_pair`` renders an item and the same user's opening request (their earlier turn, the
reference a listener compares with).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hear_gym.envs.hear2act.audio import user_turn_request
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.user.engine import ReactionKind, UserEngine
from hear_gym.envs.hear2act.user.realizer import choose_delivery, realize
from hear_gym.envs.hear2act.user.states import REQUEST_DELIVERY, Feedback
from hear_gym.speech.cache import RenderCache


@dataclass(frozen=True)
class AssentItem:
    scenario_id: str
    option: int
    request: str  # the user's opening request: the reference turn
    text: str
    delivery: str
    resolved: bool


def assent_items(split: str, seed: int, max_scenarios: int | None = None) -> list[AssentItem]:
    rng = np.random.default_rng(seed)
    items = []
    for scenario in scenarios_for(split)[:max_scenarios]:
        domain = domain_by_id(scenario.domain)
        engine = UserEngine(scenario, Feedback.PROSODY)
        for candidate in scenario.candidates:
            reaction = engine.react_to_recommendation(candidate.option_id, frozenset())
            if reaction.kind is not ReactionKind.SHARED_ASSENT:
                continue
            text = realize(reaction, scenario, domain, rng)
            items.append(
                AssentItem(
                    scenario.scenario_id,
                    candidate.option_id,
                    scenario.request,
                    text,
                    choose_delivery(reaction.state, rng),
                    reaction.state.resolved,
                )
            )
    return items


def render_pair(item: AssentItem, cache: RenderCache, prosody: str) -> tuple[np.ndarray, np.ndarray]:
    """(the assent turn's waveform, the same user's opening request's waveform)."""
    turn = cache.render(user_turn_request(item.scenario_id, item.text, item.delivery, prosody)).waveform
    reference = cache.render(user_turn_request(item.scenario_id, item.request, REQUEST_DELIVERY, prosody))
    return turn, reference.waveform
