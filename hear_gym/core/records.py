"""Records (JSON-like trees of dicts, lists, tuples, numbers, strings, enums) that an env computes
once and hands out many times: each caller gets its own copy, so a caller that edits one (an
agent, a wrapper, a vector env) never changes what the next caller sees."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from functools import partial
from typing import Any

COMPILE_AFTER = 32  # copies of a record before it is compiled (SharedRecord): about its cost
_LEAVES = (str, int, bool, type(None))


class SharedRecord:
    """``record`` kept so that ``copy()`` returns a new, equal tree: every dict and list in it is
    new, so no copy shares a mutable container with another copy or with the record; what
    nobody can change (strings, numbers, tuples of them) may be shared.

    Copies are unpickled (C code: 2-3x faster than a recursive copy in Python, about 6x faster
    than ``copy.deepcopy``). A record copied ``COMPILE_AFTER`` times is hot (an item's info at
    every reset), and if it holds plain values only (dicts, lists, tuples, strings, ints, finite
    floats, booleans, None; no enums) it is then compiled into a function that builds it from
    constants: CPython builds dict and list displays in C and reuses the leaves, about 4x faster
    than unpickling, which creates every string anew. Compiling costs about as much as 30-40
    unpickled copies, so a record copied only a few times (an outcome seen once or twice) never
    pays it. (A compiled copy does not repeat an object the record held twice, e.g. one dict
    under two keys, as the same object.)"""

    __slots__ = ("_pickled", "_copies", "_build")

    def __init__(self, record: Any) -> None:
        self._pickled = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self._copies = 0
        self._build: Callable[[], Any] | None = None

    def copy(self) -> Any:
        if self._build is not None:
            return self._build()
        record = pickle.loads(self._pickled)
        self._copies += 1
        if self._copies == COMPILE_AFTER:
            self._build = _compiled(record) or partial(pickle.loads, self._pickled)
        return record


def _compiled(record: Any) -> Callable[[], Any] | None:
    """A function that returns a new tree equal to ``record``, or None when ``record`` holds
    anything but plain values."""
    try:
        source = _literal(record)
        if source is None:
            return None
        code = compile(f"lambda: {source}", "<SharedRecord>", "eval")
    except RecursionError:  # too deep to compile: stays with pickle, which copies any depth
        return None
    # the source holds literals only (``_literal``): nothing to look up, nothing to run
    return eval(code, {"__builtins__": {}})  # noqa: S307


def _literal(value: Any) -> str | None:
    """Python source that evaluates to an equal tree, or None when ``value`` holds anything but
    plain values (exact types only: an enum is a ``str`` subclass, and ``repr`` would not
    rebuild it)."""
    kind = type(value)
    if kind in _LEAVES or (kind is float and math.isfinite(value)):
        return repr(value)
    if kind is dict:
        items = [(_literal(k), _literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if kind in (list, tuple):
        parts = [_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        return "[" + ", ".join(parts) + "]" if kind is list else "(" + "".join(f"{p}, " for p in parts) + ")"
    return None
