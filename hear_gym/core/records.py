"""Records (JSON-like trees of dicts, lists and tuples over immutable leaves) that an env computes
once and hands out many times: each caller gets its own copy, so a caller that edits one (an
agent, a wrapper, a vector env) never changes what the next caller sees."""

from __future__ import annotations

from typing import Any


def fresh_copy(record: Any) -> Any:
    """A copy of ``record`` sharing no dict, list or tuple with it (leaves: str, numbers, None,
    enums, shared as they are immutable). What ``copy.deepcopy`` gives for such trees, several
    times faster: no memo, no dispatch on unknown types."""
    if isinstance(record, dict):
        return {key: fresh_copy(value) for key, value in record.items()}
    if isinstance(record, list):
        return [fresh_copy(value) for value in record]
    if isinstance(record, tuple):
        return tuple(fresh_copy(value) for value in record)
    return record
