"""The delivery plan and its label sets (VoxReason: Auditing Source-Grounded Speech Plans Before
Synthesis, arXiv:2609.03203, §3).

A plan has seven categorical scalar fields and one set-valued field, ``emphasis`` (word indices of
the case's fixed utterance). The paper names "seven scalar fields" without listing them; we chose
rate, pitch level, pitch range, energy, pause, contour and voice quality, each with three ordered
levels, so that every field is one a speech renderer can realise and measure.

The source keys are RAVDESS's emotion x intensity grid: eight emotions, two intensities, and
neutral only at normal intensity (7 x 2 + 1 = 15 keys).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("low", "mid", "high")
CONTOURS = ("fall", "level", "rise")
VOICE_QUALITIES = ("modal", "breathy", "tense")

PLAN_FIELDS = ("rate", "pitch_level", "pitch_range", "energy", "pause", "contour", "voice_quality")
FIELD_LEVELS: dict[str, tuple[str, ...]] = {
    "rate": LEVELS,
    "pitch_level": LEVELS,
    "pitch_range": LEVELS,
    "energy": LEVELS,
    "pause": LEVELS,
    "contour": CONTOURS,
    "voice_quality": VOICE_QUALITIES,
}
# the eight scored slots of the verifier: seven scalar fields and the emphasis set
SCORED_SLOTS = (*PLAN_FIELDS, "emphasis")

EMOTIONS = ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised")
INTENSITIES = ("normal", "strong")
SOURCE_KEYS: tuple[tuple[str, str], ...] = tuple(
    (emotion, intensity)
    for emotion in EMOTIONS
    for intensity in INTENSITIES
    if not (emotion == "neutral" and intensity == "strong")
)


def key_name(emotion: str, intensity: str) -> str:
    """The key's text form, ``"angry/strong"``."""
    return f"{emotion}/{intensity}"


@dataclass(frozen=True)
class DeliveryPlan:
    rate: str
    pitch_level: str
    pitch_range: str
    energy: str
    pause: str
    contour: str
    voice_quality: str
    emphasis: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in PLAN_FIELDS:
            value = getattr(self, name)
            if value not in FIELD_LEVELS[name]:
                raise ValueError(f"plan field {name!r} must be one of {FIELD_LEVELS[name]}, got {value!r}")
        emphasis = frozenset(self.emphasis)
        if any(not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in emphasis):
            raise ValueError(
                f"emphasis must be non-negative word indices, got {sorted(self.emphasis, key=str)}"
            )
        object.__setattr__(self, "emphasis", emphasis)

    def slot(self, name: str) -> Any:
        return getattr(self, name)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: scalar fields as strings, emphasis as a sorted list."""
        out: dict[str, Any] = {name: getattr(self, name) for name in PLAN_FIELDS}
        out["emphasis"] = sorted(self.emphasis)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeliveryPlan:
        """Strict: exactly the seven fields and ``emphasis``; unknown or missing keys are errors."""
        expected = set(SCORED_SLOTS)
        keys = set(data)
        if keys != expected:
            missing, extra = sorted(expected - keys), sorted(keys - expected)
            raise ValueError(f"plan keys wrong: missing {missing}, unexpected {extra}")
        emphasis = data["emphasis"]
        if not isinstance(emphasis, Iterable) or isinstance(emphasis, str | bytes | Mapping):
            raise ValueError(f"emphasis must be a list of word indices, got {emphasis!r}")
        return cls(**{name: data[name] for name in PLAN_FIELDS}, emphasis=frozenset(emphasis))

    def replace(self, **changes: Any) -> DeliveryPlan:
        values = {name: getattr(self, name) for name in SCORED_SLOTS}
        values.update(changes)
        return DeliveryPlan(**values)
