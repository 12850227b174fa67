"""SharedRecord: a record handed out many times shares nothing mutable between callers."""

import copy
import pickle
from enum import Enum

from hear_gym.core import records
from hear_gym.core.records import COMPILE_AFTER, SharedRecord


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


def test_a_hot_tree_of_plain_values_is_rebuilt_from_constants_with_nothing_mutable_shared(monkeypatch):
    inner = {"kind": "tool", "utterance": -1}
    record = {
        "item": {"target": inner, "gaps_ms": [0.0, 600.5], "params": None, "ok": True},
        "episode": {"target": inner, "room": (2.2, 2.0, 1.5), "pair": ([1],)},
        "text": "__import__('os').remove('x') \"quoted\" \u00e9\n",
        "big": 2**70,
        "empty": ({}, [], ()),
    }
    shared = SharedRecord(record)
    unpickled, loads = [], pickle.loads
    monkeypatch.setattr(records.pickle, "loads", lambda data: unpickled.append(1) or loads(data))
    copies = [shared.copy() for _ in range(COMPILE_AFTER + 2)]
    assert len(unpickled) == COMPILE_AFTER  # then compiled: the last two copies were built
    first, second = copies[-2:]
    assert all(c == record for c in copies)
    assert type(first["episode"]["room"]) is tuple and type(first["big"]) is int
    # what the record shared inside itself is two containers in a copy, and nothing crosses copies
    assert first["item"]["target"] is not first["episode"]["target"]
    first["item"]["gaps_ms"].append(1.0)
    first["episode"]["pair"][0].append(2)
    first["empty"][0]["x"] = 1
    assert second == record and shared.copy() == record


def test_values_a_literal_cannot_rebuild_are_copied_through_pickle():
    for record in ({"x": [float("inf")]}, {"x": [Colour.RED]}):
        shared = SharedRecord(record)
        first = [shared.copy() for _ in range(COMPILE_AFTER + 1)][-1]
        assert first == record and first["x"] is not record["x"]
        first["x"].append(1)
        assert shared.copy() == record
    assert SharedRecord({"x": [Colour.RED]}).copy()["x"][0] is Colour.RED
