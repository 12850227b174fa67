"""The key -> plan table: each of the 15 source keys maps deterministically to one expected plan
(VoxReason §4.1). The paper publishes the rule, not the table, so every value here is ours.

How we chose them: the emotion sets a base plan after the acoustic profiles reported for acted
emotional speech (anger and happiness fast, high and loud; sadness slow, low, quiet and
breathy; calm slow and quiet; fear fast and high with a narrow range; disgust low and tense;
surprise high, wide and rising). Intensity is an *intensity-triggered edit* (§5.2): ``strong``
moves exactly one slot, its emotion's ``INTENSITY_SLOTS`` entry, one step further from neutral,
so the normal/strong plans of one emotion differ in one linked slot and an edit between them
always has a non-empty declared delta.

Each emotion strengthens along its *own* slot (seven emotions, seven scalar fields), so the
slot an edit changes, and the value it changes to, depend on the emotion the evidence carries:
no single delta is right on more than one emotion's edits in one direction, and an editor that
does not open the evidence cannot guess the change (``tests/envs/deliveryplan/
test_deliveryplan_shortcuts.py``). Emphasis marks the utterance's focus word (``FOCUS``) for
every emotion except sad, calm and fearful (flat or breathless delivery, no emphasis). That is
about 60% of the suite's case sides, where the utterance record is gold (it licenses which word)
as often as a record drawn at random: with the source record one of two recordings, neither
record kind is gold more often than chance (``cases``).
"""

from __future__ import annotations

from hear_gym.envs.deliveryplan.plan import EMOTIONS, FIELD_LEVELS, SOURCE_KEYS, DeliveryPlan

FOCUS = frozenset({0})  # the utterance's subject noun ("Kids", "Dogs")

BASE_PLANS: dict[str, DeliveryPlan] = {
    "neutral": DeliveryPlan("mid", "mid", "mid", "mid", "mid", "fall", "modal", FOCUS),
    "calm": DeliveryPlan("low", "mid", "low", "low", "mid", "fall", "modal", frozenset()),
    "happy": DeliveryPlan("high", "high", "high", "mid", "low", "rise", "modal", FOCUS),
    "sad": DeliveryPlan("low", "low", "low", "low", "high", "fall", "breathy", frozenset()),
    "angry": DeliveryPlan("high", "mid", "mid", "high", "low", "fall", "tense", FOCUS),
    "fearful": DeliveryPlan("high", "high", "low", "mid", "high", "rise", "breathy", frozenset()),
    "disgust": DeliveryPlan("mid", "low", "mid", "mid", "high", "fall", "tense", FOCUS),
    "surprised": DeliveryPlan("mid", "mid", "high", "high", "mid", "rise", "modal", FOCUS),
}
assert tuple(BASE_PLANS) == EMOTIONS

# (slot, its value at strong intensity) per emotion: calm pauses longer, happy gets louder, sad
# flattens its fall, anger widens its range, fear tightens into a tense voice, disgust slows,
# surprise rises in pitch
INTENSITY_SLOTS: dict[str, tuple[str, str]] = {
    "calm": ("pause", "high"),
    "happy": ("energy", "high"),
    "sad": ("contour", "level"),
    "angry": ("pitch_range", "high"),
    "fearful": ("voice_quality", "tense"),
    "disgust": ("rate", "low"),
    "surprised": ("pitch_level", "high"),
}


def expected_plan(emotion: str, intensity: str) -> DeliveryPlan:
    """The expected plan of one source key."""
    if (emotion, intensity) not in SOURCE_KEYS:
        raise ValueError(f"unknown source key {emotion}/{intensity}; keys: {SOURCE_KEYS}")
    base = BASE_PLANS[emotion]
    if intensity == "normal":
        return base
    slot, value = INTENSITY_SLOTS[emotion]
    if value not in FIELD_LEVELS[slot] or base.slot(slot) == value:
        raise ValueError(f"strong {emotion} must change {slot} to another level, got {value!r}")
    return base.replace(**{slot: value})


PLAN_TABLE: dict[tuple[str, str], DeliveryPlan] = {key: expected_plan(*key) for key in SOURCE_KEYS}


def edited_key(emotion: str, intensity: str) -> tuple[str, str]:
    """The one-cue edit of a source key: intensity flips (normal <-> strong); neutral, which has
    only normal intensity in RAVDESS, edits to calm/normal (its nearest key, our choice)."""
    if emotion == "neutral":
        return ("calm", "normal")
    return (emotion, "strong" if intensity == "normal" else "normal")
