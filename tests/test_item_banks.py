"""Every env's item bank is pinned: its generator version, the item ids of every split and every
item's content hash to the digest recorded here. A rename of a field or a variable must leave the
banks byte-identical (their ``StableRng`` keys keep their exact strings), so no generator version
moves and no older run or cache is orphaned.

Fields renamed since the digests were recorded are hashed under their recorded names
(``RECORDED_FIELD_NAMES``). To see a digest after a deliberate generator change, run
``python -m tests.test_item_banks``.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from hear_gym.core.registry import family

# recorded digests of (generator version, ids per split, every item's content)
RECORDED = {
    "hear_gym/Hear2Act-v0": "51619a62e4206258a680840015062584aa7001f6d57aeb835c73a18c595dc468",
    "hear_gym/VoiceGate-v0": "b4968ebfe1c99d9ad6a774957b4756d75a533d3583482c49ff978341aa7e94ad",
    "hear_gym/Onset-v0": "36a9572b6436e5767a498d72e8a70a69e2ea35bca17f954d61b5d5abbff35d92",
    "hear_gym/DeliveryPlan-v0": "8e476b8abccbbda2f2513e4990388a1637c6149ba7c47c7b8f4f308842c0d235",
    "hear_gym/Ambiguity-v0": "9640d1252200fea55da4d2148e1a000a9e334579dd551d68e9139a5af47e23c1",
}

# field name now -> the name it had when the digests were recorded
RECORDED_FIELD_NAMES: dict[str, dict[str, str]] = {
    "hear_gym/VoiceGate-v0": {},
    "hear_gym/Onset-v0": {"domain": "family"},
}


def _hear2act() -> Iterable[Any]:
    from hear_gym.envs.hear2act.scenarios.bank import scenario_bank

    return scenario_bank()


def _voicegate() -> Iterable[Any]:
    from hear_gym.envs.voicegate.items.generator import SIDE_TALK_CUES, all_items

    return [item for cue in SIDE_TALK_CUES for item in all_items(cue)]


def _onset() -> Iterable[Any]:
    from hear_gym.envs.onset.groups.generator import all_groups

    return all_groups()


def _deliveryplan() -> Iterable[Any]:
    from hear_gym.envs.deliveryplan.cases import generate_cases

    return generate_cases()


def _ambiguity() -> Iterable[Any]:
    from hear_gym.envs.ambiguity.items.generator import all_episodes

    return all_episodes()


BANKS: dict[str, Callable[[], Iterable[Any]]] = {
    "hear_gym/Hear2Act-v0": _hear2act,
    "hear_gym/VoiceGate-v0": _voicegate,
    "hear_gym/Onset-v0": _onset,
    "hear_gym/DeliveryPlan-v0": _deliveryplan,
    "hear_gym/Ambiguity-v0": _ambiguity,
}


def _plain(value: Any, names: dict[str, str]) -> Any:
    """``value`` as JSON data, dataclass fields under their recorded names."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            names.get(f.name, f.name): _plain(getattr(value, f.name), names)
            for f in dataclasses.fields(value)
        }
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(mode="json"), names)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v, names) for k, v in value.items()}
    if isinstance(value, (frozenset, set)):
        return sorted(_plain(v, names) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, names) for v in value]
    return value


def bank_digest(env_id: str) -> str:
    env_family = family(env_id)
    names = RECORDED_FIELD_NAMES.get(env_id, {})
    content = {
        "generator_version": env_family.generator_version,
        "ids": {split: list(env_family.item_ids(split)) for split in env_family.splits},
        "items": _plain(list(BANKS[env_id]()), names),
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("env_id", sorted(RECORDED))
def test_item_bank_is_unchanged(env_id):
    assert bank_digest(env_id) == RECORDED[env_id]


if __name__ == "__main__":
    for env_id in RECORDED:
        print(f'    "{env_id}": "{bank_digest(env_id)}",')
