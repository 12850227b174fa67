"""The suite's three partitions and the evidence-sensitivity matrix (VoxReason §4.1, §5.2,
Appendix C).

* ``public``: 67/17/16 train/dev/test, a seeded permutation of the 100 case ids;
* ``source_key_disjoint``: 60/16/24, whole keys held out (``KEY_DISJOINT_DEV``/``_TEST``): no
  test key is seen in training; each held-out key's other intensity stays in training, so an
  emotion prior has something to transfer and an intensity edit is what it must get right;
* ``source_emotion_disjoint``: 56/12/32, whole emotions held out (``EMOTION_DISJOINT_DEV``/
  ``_TEST``).

The matrix crosses the six controls with the 24 held-out pairs of the key-disjoint test split
and three seeds: 6 x 24 x 3 = 432 paired records.

Training material. The splits partition *cases* by their original key, as the paper's do, so a
training case can edit to a held-out key (calm/normal edits to calm/strong, a test key of the
key-disjoint split). Every training material of a partition (demonstrations, GRPO rows, fitted
controls, PPO episodes, probe audio) is therefore drawn from ``training_sides`` (the training
cases' sides whose key is not held out) or ``training_pairs`` (the training cases both of whose
sides are), never from the training split's ids alone.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from hear_gym.envs.deliveryplan.cases import DEFAULT_SEED, generate_cases
from hear_gym.envs.deliveryplan.plan import SOURCE_KEYS

PARTITIONS = ("public", "source_key_disjoint", "source_emotion_disjoint")
SPLITS = ("train", "dev", "test")
SPLIT_SIZES: dict[str, dict[str, int]] = {
    "public": {"train": 67, "dev": 17, "test": 16},
    "source_key_disjoint": {"train": 60, "dev": 16, "test": 24},
    "source_emotion_disjoint": {"train": 56, "dev": 12, "test": 32},
}
KEY_DISJOINT_DEV = (("disgust", "strong"), ("surprised", "normal"))
KEY_DISJOINT_TEST = (("calm", "strong"), ("happy", "strong"), ("sad", "strong"), ("fearful", "strong"))
EMOTION_DISJOINT_DEV = ("fearful",)
EMOTION_DISJOINT_TEST = ("disgust", "surprised")
MATRIX_CONDITIONS = ("text_only", "oracle", "prior_only", "declared_delta", "citation_echo", "shuffled_delta")
MATRIX_SEEDS = (0, 1, 2)


def _public(seed: int) -> dict[str, tuple[str, ...]]:
    ids = [c.case_id for c in generate_cases(seed)]
    order = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]
    sizes = SPLIT_SIZES["public"]
    cut1, cut2 = sizes["train"], sizes["train"] + sizes["dev"]
    return {
        "train": tuple(sorted(order[:cut1])),
        "dev": tuple(sorted(order[cut1:cut2])),
        "test": tuple(sorted(order[cut2:])),
    }


def _by_rule(seed: int, split_of) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {s: [] for s in SPLITS}
    for case in generate_cases(seed):
        out[split_of(case.original.source_key)].append(case.case_id)
    return {s: tuple(ids) for s, ids in out.items()}


@cache
def partition(name: str, seed: int = DEFAULT_SEED) -> dict[str, tuple[str, ...]]:
    """Case ids per split (``train``, ``dev``, ``test``) of one partition."""
    if name == "public":
        return _public(seed)
    if name == "source_key_disjoint":
        return _by_rule(
            seed,
            lambda key: "test" if key in KEY_DISJOINT_TEST else "dev" if key in KEY_DISJOINT_DEV else "train",
        )
    if name == "source_emotion_disjoint":
        return _by_rule(
            seed,
            lambda key: (
                "test"
                if key[0] in EMOTION_DISJOINT_TEST
                else "dev"
                if key[0] in EMOTION_DISJOINT_DEV
                else "train"
            ),
        )
    raise ValueError(f"unknown partition {name!r}; partitions: {PARTITIONS}")


def held_out_keys(name: str) -> frozenset[tuple[str, str]]:
    """The source keys a partition keeps out of training: every key of a dev or test original
    (for the emotion-disjoint partition, every key of a held-out emotion); none for ``public``,
    whose splits share keys by design."""
    if name == "public":
        return frozenset()
    if name == "source_key_disjoint":
        return frozenset((*KEY_DISJOINT_DEV, *KEY_DISJOINT_TEST))
    if name == "source_emotion_disjoint":
        return frozenset(k for k in SOURCE_KEYS if k[0] in (*EMOTION_DISJOINT_DEV, *EMOTION_DISJOINT_TEST))
    raise ValueError(f"unknown partition {name!r}; partitions: {PARTITIONS}")


@cache
def training_sides(name: str, seed: int = DEFAULT_SEED) -> tuple[tuple[str, int], ...]:
    """(case id, side) of every side of a training case whose source key is not held out."""
    cases = {c.case_id: c for c in generate_cases(seed)}
    held = held_out_keys(name)
    return tuple(
        (case_id, side)
        for case_id in partition(name, seed)["train"]
        for side, view in enumerate((cases[case_id].original, cases[case_id].edited))
        if view.source_key not in held
    )


@cache
def training_pairs(name: str, seed: int = DEFAULT_SEED) -> tuple[str, ...]:
    """Training cases both of whose sides are training sides: what pair-level training uses."""
    sides = set(training_sides(name, seed))
    return tuple(c for c in partition(name, seed)["train"] if (c, 0) in sides and (c, 1) in sides)


def item_ids(split: str, partition_name: str = "public", seed: int = DEFAULT_SEED) -> tuple[str, ...]:
    """The cases an env plays for ``split``: ``split_ids``, except that a ``train`` split plays
    only its ``training_pairs`` (an episode shows both sides, so a case whose edit is held out
    is no training episode)."""
    if "/" in split:
        partition_name, _, split = split.partition("/")
    if split == "train":
        return training_pairs(partition_name, seed)
    return split_ids(split, partition_name, seed)


QUALIFIED_SPLITS = tuple(f"{p}/{s}" for p in PARTITIONS[1:] for s in SPLITS)


def split_ids(split: str, partition_name: str = "public", seed: int = DEFAULT_SEED) -> tuple[str, ...]:
    """Case ids of one split (``"all"``: every case). A split may name its partition,
    ``"source_key_disjoint/test"``, which then overrides ``partition_name``; that is how an
    evaluation that knows only split names (``EnvFamily.item_ids``) reaches the shortcut splits."""
    if "/" in split:
        partition_name, _, split = split.partition("/")
        if partition_name not in PARTITIONS:
            raise ValueError(f"unknown partition {partition_name!r} in split; partitions: {PARTITIONS}")
    if split == "all":
        return tuple(c.case_id for c in generate_cases(seed))
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; splits: {(*SPLITS, 'all')}")
    return partition(partition_name, seed)[split]


def matrix_cells(seed: int = DEFAULT_SEED) -> tuple[tuple[str, str, int], ...]:
    """The evidence-sensitivity matrix: (condition, case id, seed) for the six conditions, the 24
    held-out pairs of the key-disjoint test split and the three seeds (432 cells)."""
    pairs = partition("source_key_disjoint", seed)["test"]
    return tuple((c, p, s) for c in MATRIX_CONDITIONS for p in pairs for s in MATRIX_SEEDS)
