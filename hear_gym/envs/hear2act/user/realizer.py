"""The fixed language realizer: structured reaction -> a natural user utterance.

Each reaction kind has a pool of sentence frames; the frame and the phrase variants are drawn
from the episode's generator, so the words vary across episodes yet repeat exactly for a seed.

The property the benchmark rests on: under prosody-mediated feedback every assenting reaction to
a recommendation (genuine *or* reluctant) is drawn from ``SHARED_ACCEPTANCE_POOL`` with the same
draw, so the words carry no information about resolution; only the delivery label does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hear_gym.envs.hear2act.scenarios.domain_schema import DomainSchema
from hear_gym.envs.hear2act.scenarios.model import Scenario
from hear_gym.envs.hear2act.user.engine import Reaction, ReactionKind
from hear_gym.envs.hear2act.user.states import DELIVERY_LABELS, ConcernState

SHARED_ACCEPTANCE_POOL: tuple[str, ...] = (
    "Okay, sounds good.",
    "Sure, that works.",
    "Alright, that sounds fine.",
    "Okay, I can go with that.",
    "Yeah, that could work.",
    "Sounds good to me.",
    "Okay, let's go with that one.",
    "Alright, I think that works.",
    "That's fine.",
    "Okay, that seems reasonable.",
)

FRAMES: dict[ReactionKind, tuple[str, ...]] = {
    ReactionKind.SHARED_ASSENT: SHARED_ACCEPTANCE_POOL,
    ReactionKind.GENUINE_ACCEPT: (
        "That sounds perfect.",
        "Oh, that's exactly what I was looking for!",
        "Yes, that one checks every box for me.",
        "That's great, it covers everything I need.",
        "Perfect, I really like that one.",
    ),
    ReactionKind.REJECT_BUDGET: (
        "That's over my budget of {budget}.",
        "No, that's more than the {budget} I said I could spend.",
        "I can't do that one, it goes past my limit of {budget}.",
    ),
    ReactionKind.STATE_REQUIREMENT: (
        "That won't work. I need {requirement}.",
        "I need {requirement}, that's a must for me.",
        "Sorry, but I can't compromise on this: I need {requirement}.",
    ),
    ReactionKind.CONCERN_DIRECTION: (
        "Hmm, I'm not sure about this one. I'd really prefer {direction}.",
        "I appreciate it, but what I really need is {direction}.",
        "That's not quite it. I'd rather have {direction}.",
    ),
    ReactionKind.ASSENT_MILD_CONCERN: (
        "That sounds good, though I'd like {direction} if possible.",
        "Okay, that works, but ideally I'd have {direction}.",
        "Sounds fine. I'll just mention that I'd prefer {direction}.",
    ),
    ReactionKind.ANSWER_REQUIREMENT: (
        "For {label}, I need {requirement}.",
        "Yes, that matters to me: I need {requirement}.",
        "Good question. I need {requirement}.",
    ),
    ReactionKind.ANSWER_NOT_IMPORTANT: (
        "Honestly, {label} doesn't matter much to me.",
        "I'm not too worried about {label}.",
        "{Label} isn't something I care much about.",
    ),
    ReactionKind.ANSWER_DIRECTION: (
        "Well, I guess what I really need is {direction}.",
        "What I really need is {direction}.",
        "I suppose what matters most is {direction}.",
    ),
    ReactionKind.ANSWER_BUDGET: (
        "What I really need is something within my budget of {budget}.",
        "Mainly that it stays within {budget}.",
    ),
    ReactionKind.ANSWER_HAPPY: (
        "Honestly, I'm happy with this one.",
        "Nothing else, this one covers what I need.",
    ),
    ReactionKind.CLARIFY_RESOLVED: (
        "Yes, this one really works for me.",
        "Yes, I'm genuinely happy with it.",
    ),
    ReactionKind.CLARIFY_UNRESOLVED: (
        "To be honest, it doesn't quite work for me yet.",
        "Not really, something about it still isn't right for me.",
    ),
    ReactionKind.CONFIRM_ACCEPTED: (
        "Great, let's go with it.",
        "Yes, please go ahead and set that up.",
    ),
    ReactionKind.CONFIRM_DECLINED: (
        "I'm not ready to commit to that one yet.",
        "Hold on, I haven't agreed to that one.",
    ),
    ReactionKind.OUT_OF_PATIENCE: (
        "You've asked enough, let's just go with this one.",
        "Really, this one is fine. Please just book it.",
    ),
    ReactionKind.REPAIR: (
        "Sorry, I didn't follow that. Could you rephrase?",
        "I'm not sure what you mean.",
    ),
}


def choose_delivery(state: ConcernState, rng: np.random.Generator) -> str:
    return _pick(DELIVERY_LABELS[state], rng)


@dataclass(frozen=True)
class Wording:
    """What a scenario's frames are filled with: the budget phrase, each concern level's
    requirement and directions, and each attribute's label. A scenario fixes them, so an env
    builds its ``Wording`` once per scenario rather than looking them up at every turn."""

    budget: str
    concerns: dict[str, tuple[str, tuple[str, ...]]]  # level -> (requirement, directions)
    labels: dict[str, tuple[str, str]]  # attribute -> (label, label capitalized)

    @classmethod
    def of(cls, scenario: Scenario, domain: DomainSchema) -> Wording:
        return cls(
            scenario.budget.phrase(),
            {
                concern.level: (concern.requirement, tuple(domain.dimension(concern.attribute).directions))
                for concern in scenario.concerns
            },
            {dim.key: (dim.label, dim.label[0].upper() + dim.label[1:]) for dim in domain.concern_dimensions},
        )

    def realize(self, reaction: Reaction, rng: np.random.Generator) -> str:
        """The user's words for ``reaction``: a frame, then a direction where the reaction
        names a concern, drawn from ``rng`` in that order."""
        frame = _pick(FRAMES[reaction.kind], rng)
        slots = {"budget": self.budget}
        if reaction.level is not None:
            slots["requirement"], directions = self.concerns[reaction.level]
            slots["direction"] = _pick(directions, rng)
        if reaction.attribute is not None:
            slots["label"], slots["Label"] = self.labels[reaction.attribute]
        return frame.format(**slots)

    def every_realization(self, reaction: Reaction) -> tuple[str, ...]:
        """Every text ``realize`` can give for ``reaction`` (each frame with each direction), in
        a fixed order: what a user can say for it, to render ahead of any episode."""
        slots = {"budget": self.budget}
        directions: tuple[str | None, ...] = (None,)
        if reaction.level is not None:
            slots["requirement"], directions = self.concerns[reaction.level]
        if reaction.attribute is not None:
            slots["label"], slots["Label"] = self.labels[reaction.attribute]
        texts = []
        for frame in FRAMES[reaction.kind]:
            for direction in directions:
                text = frame.format(**slots, **({} if direction is None else {"direction": direction}))
                if text not in texts:  # a frame without {direction} is one text
                    texts.append(text)
        return tuple(texts)


def realize(reaction: Reaction, scenario: Scenario, domain: DomainSchema, rng: np.random.Generator) -> str:
    return Wording.of(scenario, domain).realize(reaction, rng)


def _pick(items, rng: np.random.Generator):
    # Generator.random() is several times cheaper than Generator.integers() per call, and
    # the realizer runs on every env step.
    return items[int(rng.random() * len(items))]
