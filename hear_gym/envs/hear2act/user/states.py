"""User-side state vocabularies (paper section 4.3 and Table 12)."""

from __future__ import annotations

from enum import Enum

from hear_gym.speech.plans import NEUTRAL_DELIVERY


class Feedback(str, Enum):
    """How the user realizes soft concerns: in words, or only in vocal delivery."""

    PROSODY = "prosody"
    EXPLICIT = "explicit"


class ConcernState(str, Enum):
    """Graded concern state of the user's response to the current recommendation."""

    GENUINE_ACCEPTANCE = "genuine_acceptance"
    RELUCTANT_ACCEPTANCE = "reluctant_acceptance"
    VOICED_CONCERN = "voiced_concern"
    REJECTION = "rejection"

    @property
    def resolved(self) -> bool:
        return self is ConcernState.GENUINE_ACCEPTANCE


# Table 12: state -> graded delivery labels used for speech realization and the T+S tag.
DELIVERY_LABELS: dict[ConcernState, tuple[str, ...]] = {
    ConcernState.GENUINE_ACCEPTANCE: ("satisfied", "warm", "enthusiastic", "relieved"),
    ConcernState.RELUCTANT_ACCEPTANCE: ("underwhelmed", "lukewarm", "hesitant", "flat"),
    ConcernState.VOICED_CONCERN: ("concerned",),
    ConcernState.REJECTION: ("frustrated", "disappointed", "impatient", "firm"),
}
ALL_DELIVERY_LABELS: tuple[str, ...] = tuple(label for labels in DELIVERY_LABELS.values() for label in labels)
RESOLVED_DELIVERY_LABELS = frozenset(DELIVERY_LABELS[ConcernState.GENUINE_ACCEPTANCE])
STATE_OF_LABEL: dict[str, ConcernState] = {
    label: state for state, labels in DELIVERY_LABELS.items() for label in labels
}

# The opening request is not a reaction to any recommendation; it gets a neutral delivery.
REQUEST_DELIVERY = NEUTRAL_DELIVERY
# Every label a Hear2Act user speaks with; each plan table must have a plan for each.
SPOKEN_LABELS: tuple[str, ...] = (REQUEST_DELIVERY, *ALL_DELIVERY_LABELS)


class OptionAcceptance(str, Enum):
    """Per-recommendation user-side state; OptSat% counts the non-negative ones."""

    POSITIVE = "positive"  # genuine acceptance
    NEUTRAL = "neutral"  # reluctant acceptance
    NEGATIVE = "negative"  # voiced concern or rejection

    @classmethod
    def of(cls, state: ConcernState) -> OptionAcceptance:
        if state is ConcernState.GENUINE_ACCEPTANCE:
            return cls.POSITIVE
        if state is ConcernState.RELUCTANT_ACCEPTANCE:
            return cls.NEUTRAL
        return cls.NEGATIVE


class InteractionSatisfaction(str, Enum):
    """Per-recommendation user-side state; SvcSat% counts the appreciative ones."""

    APPRECIATIVE = "appreciative"
    NEUTRAL = "neutral"
    ANNOYED = "annoyed"
