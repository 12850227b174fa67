"""fresh_copy: a record handed out many times shares nothing mutable between callers."""

import copy
from enum import Enum

from hear_gym.core.records import fresh_copy


class Colour(str, Enum):
    RED = "red"


def test_fresh_copy_equals_a_deep_copy_and_shares_no_container():
    record = {"a": [1, {"b": (2.5, [None, Colour.RED])}], "c": "text", "d": {"e": []}}
    copied = fresh_copy(record)
    assert copied == copy.deepcopy(record)
    copied["a"][1]["b"][1].append("x")
    copied["d"]["e"].append(1)
    copied["a"].append(3)
    assert record == {"a": [1, {"b": (2.5, [None, Colour.RED])}], "c": "text", "d": {"e": []}}
