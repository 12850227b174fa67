"""Prosody plans: what a delivery label means acoustically, as data.

``delivery_plans.json`` maps every delivery label of the paper's Table 12 (and ``neutral`` for
the opening request) to rate, pitch level, pitch range, gain, lead and clause pauses and final
contour. ``plan_for`` adds a small deterministic per-utterance variation (keyed by the request's
content hash), so that two utterances with the same label do not sound identical while the same
request always gets the same plan. Every renderer realizes the same plan, each by its own means.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib import resources
from typing import Literal

from hear_gym.user.states import ALL_DELIVERY_LABELS, REQUEST_DELIVERY

Contour = Literal["fall", "rise", "level"]
DELIVERY_LABELS = (REQUEST_DELIVERY, *ALL_DELIVERY_LABELS)

# Per-utterance variation: relative rate, absolute pitch / range points, dB, relative pauses.
VARIATION = {"rate": 0.05, "pitch": 3.0, "range": 5.0, "gain_db": 1.0, "pause": 0.15}


@dataclass(frozen=True)
class ProsodyPlan:
    label: str
    rate: float
    pitch: float
    range: float
    gain_db: float
    lead_pause_ms: float
    clause_pause_ms: float
    final_contour: Contour

    def as_dict(self) -> dict:
        return asdict(self)


@cache
def base_plans() -> dict[str, ProsodyPlan]:
    raw = json.loads((resources.files("hear_gym.speech") / "delivery_plans.json").read_text("utf-8"))
    plans = {label: ProsodyPlan(label=label, **values) for label, values in raw.items()
             if not label.startswith("_")}
    missing = set(DELIVERY_LABELS) - set(plans)
    if missing:
        raise ValueError(f"delivery_plans.json lacks labels {sorted(missing)}")
    return plans


def plan_for(label: str, variation_key: str) -> ProsodyPlan:
    """The plan for ``label`` with the deterministic variation of ``variation_key``."""
    try:
        base = base_plans()[label]
    except KeyError:
        raise ValueError(f"unknown delivery label {label!r}; labels: {list(DELIVERY_LABELS)}") from None
    u = _uniforms(variation_key, 5)
    pause = 1 + VARIATION["pause"] * u[4]
    return replace(
        base,
        rate=round(base.rate * (1 + VARIATION["rate"] * u[0]), 1),
        pitch=round(min(99.0, max(0.0, base.pitch + VARIATION["pitch"] * u[1])), 1),
        range=round(min(99.0, max(0.0, base.range + VARIATION["range"] * u[2])), 1),
        gain_db=round(base.gain_db + VARIATION["gain_db"] * u[3], 2),
        lead_pause_ms=round(base.lead_pause_ms * pause),
        clause_pause_ms=round(base.clause_pause_ms * pause),
    )


def _uniforms(key: str, n: int) -> list[float]:
    """n numbers in [-1, 1) derived from ``key`` only."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=2 * n).digest()
    return [int.from_bytes(digest[2 * i:2 * i + 2], "little") / 32768.0 - 1.0 for i in range(n)]
