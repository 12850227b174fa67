"""SharedRecord: a record handed out many times shares nothing mutable between callers."""

import copy
from enum import Enum

from hear_gym.core.records import SharedRecord


class Colour(str, Enum):
    RED = "red"


def test_each_copy_equals_the_record_and_shares_no_container_with_it_or_another_copy():
    record = {"a": [1, {"b": (2.5, [None, Colour.RED])}], "c": "text", "d": {"e": []}}
    original = copy.deepcopy(record)
    shared = SharedRecord(record)
    first, second = shared.copy(), shared.copy()
    assert first == second == original and first["a"][1]["b"][1][1] is Colour.RED
    first["a"][1]["b"][1].append("x")
    first["d"]["e"].append(1)
    record["a"].append(3)
    assert second == original and shared.copy() == original
