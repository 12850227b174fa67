"""Rows of a trainer's ``curve.jsonl``: strict JSON, so a metric with nothing to count is null."""

from __future__ import annotations

import math


def finite(value):
    """NaN and infinities as JSON null, in nested dicts too."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    return value
