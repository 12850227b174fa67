"""The key -> plan table: each of the 15 source keys maps deterministically to one expected plan
(VoxReason §4.1). The paper publishes the rule, not the table, so every value here is ours.

How we chose them: the emotion sets a base plan after the acoustic profiles reported for acted
emotional speech (anger and happiness fast, high and loud; sadness slow, low, quiet and
breathy; calm slow and quiet; fear fast and high with a narrow range; disgust slow and low; surprise
high, wide and rising). Intensity is an *intensity-triggered edit* (§5.2): ``strong`` raises
exactly one slot by one level, energy when it can, else pitch range, else rate, so the
normal/strong plans of one emotion always differ in one linked slot and an edit between them
always has a non-empty declared delta. Emphasis marks the utterance's focus word
(``FOCUS``) for every emotion except sad and calm (flat delivery, no emphasis).
"""

from __future__ import annotations

from hear_gym.envs.deliveryplan.plan import EMOTIONS, LEVELS, SOURCE_KEYS, DeliveryPlan

FOCUS = frozenset({0})  # the utterance's subject noun ("Kids", "Dogs")

BASE_PLANS: dict[str, DeliveryPlan] = {
    "neutral": DeliveryPlan("mid", "mid", "mid", "mid", "mid", "fall", "modal", FOCUS),
    "calm": DeliveryPlan("low", "mid", "low", "low", "mid", "fall", "modal", frozenset()),
    "happy": DeliveryPlan("high", "high", "high", "mid", "low", "rise", "modal", FOCUS),
    "sad": DeliveryPlan("low", "low", "low", "low", "high", "fall", "breathy", frozenset()),
    "angry": DeliveryPlan("high", "mid", "mid", "high", "low", "fall", "tense", FOCUS),
    "fearful": DeliveryPlan("high", "high", "low", "mid", "high", "rise", "breathy", FOCUS),
    "disgust": DeliveryPlan("low", "low", "mid", "mid", "high", "fall", "tense", FOCUS),
    "surprised": DeliveryPlan("mid", "high", "high", "high", "mid", "rise", "modal", FOCUS),
}
assert tuple(BASE_PLANS) == EMOTIONS

# the slots ``strong`` may raise, in order of preference
INTENSITY_SLOTS = ("energy", "pitch_range", "rate")


def _raise_one_level(plan: DeliveryPlan) -> DeliveryPlan:
    for slot in INTENSITY_SLOTS:
        level = LEVELS.index(plan.slot(slot))
        if level < len(LEVELS) - 1:
            return plan.replace(**{slot: LEVELS[level + 1]})
    raise ValueError(f"no slot of {plan} can be raised")


def expected_plan(emotion: str, intensity: str) -> DeliveryPlan:
    """The expected plan of one source key."""
    if (emotion, intensity) not in SOURCE_KEYS:
        raise ValueError(f"unknown source key {emotion}/{intensity}; keys: {SOURCE_KEYS}")
    base = BASE_PLANS[emotion]
    return base if intensity == "normal" else _raise_one_level(base)


PLAN_TABLE: dict[tuple[str, str], DeliveryPlan] = {key: expected_plan(*key) for key in SOURCE_KEYS}


def edited_key(emotion: str, intensity: str) -> tuple[str, str]:
    """The one-cue edit of a source key: intensity flips (normal <-> strong); neutral, which has
    only normal intensity in RAVDESS, edits to calm/normal (its nearest key, our choice)."""
    if emotion == "neutral":
        return ("calm", "normal")
    return (emotion, "strong" if intensity == "normal" else "normal")
