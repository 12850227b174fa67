"""Every invariant VoxReason states about its suite (§3, §4.1, §5.2, §8, Appendix C), checked on
the generated cases."""

from collections import Counter

import pytest

from hear_gym.envs.deliveryplan.cases import (
    DEFAULT_SEED,
    KEY_COUNTS,
    KIND_OF,
    N_CASES,
    OTHER_TAKE,
    RECORD_NAMES,
    SOURCE,
    TEST_VOICES,
    UTTERANCES,
    generate_cases,
    plan_delta,
)
from hear_gym.envs.deliveryplan.plan import EMOTIONS, INTENSITIES, SCORED_SLOTS, SOURCE_KEYS
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.splits import (
    MATRIX_CONDITIONS,
    MATRIX_SEEDS,
    PARTITIONS,
    SPLIT_SIZES,
    matrix_cells,
    partition,
)

CASES = generate_cases()


def test_fifteen_ravdess_keys():
    assert len(SOURCE_KEYS) == 15 == len(EMOTIONS) * len(INTENSITIES) - 1
    assert ("neutral", "strong") not in SOURCE_KEYS


def test_hundred_cases_over_all_fifteen_keys():
    assert len(CASES) == N_CASES == 100
    assert Counter(c.original.source_key for c in CASES) == Counter(KEY_COUNTS)
    assert set(KEY_COUNTS) == set(SOURCE_KEYS)
    assert len({c.case_id for c in CASES}) == 100


def test_each_key_maps_to_one_expected_plan():
    plans: dict = {}
    for case in CASES:
        for view in (case.original, case.edited):
            plans.setdefault(view.source_key, set()).add(view.expected_plan)
            assert view.expected_plan == PLAN_TABLE[view.source_key]
    assert all(len(p) == 1 for p in plans.values())
    assert len(set(PLAN_TABLE.values())) == 15  # distinct keys, distinct plans


def test_narrow_construct_two_utterances_one_scene_two_roles():
    assert len({c.utterance for c in CASES}) == 2
    assert len({c.scene for c in CASES}) == 1
    assert len({c.role for c in CASES}) == 2


def test_records_name_source_emotion_and_intensity():
    for case in CASES:
        for view in (case.original, case.edited):
            assert tuple(r.name for r in view.records) == RECORD_NAMES
            assert (view.source.emotion, view.source.intensity) == view.source_key
            assert view.source.text == case.utterance  # the source is the take of the line
            other = view.record(OTHER_TAKE)
            assert other.text != case.utterance and other.text in UTTERANCES
            assert (other.kind, other.voice) == (KIND_OF[SOURCE], view.source.voice)
            assert (other.emotion, other.intensity) == case.original.source_key
            assert view.decisive_cue == SOURCE
            emphasis = {"utterance"} if view.expected_plan.emphasis else set()
            assert view.gold_evidence == {SOURCE} | emphasis


def test_an_edit_changes_one_cue_and_fixes_everything_else():
    for case in CASES:
        before, after = case.original.records, case.edited.records
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert changed == [RECORD_NAMES.index(SOURCE)]
        a, b = before[changed[0]], after[changed[0]]
        assert (a.text, a.voice) == (b.text, b.voice)
        assert case.original.source_key != case.edited.source_key


def test_every_key_has_the_same_share_of_held_out_voices():
    """Voices are dealt per key, so the cases on held-out voices mix keys (and so edits) as the
    suite does: no key's edit is over-represented among them."""
    for key, n in KEY_COUNTS.items():
        voices = [c.original.source.voice for c in CASES if c.original.source_key == key]
        assert sum(v in TEST_VOICES for v in voices) == round(n / 2), (key, voices)


def test_declared_delta_is_the_plan_change_and_never_empty():
    for case in CASES:
        assert case.declared_delta == plan_delta(case.original.expected_plan, case.edited.expected_plan)
        assert case.declared_delta and set(case.declared_delta) <= set(SCORED_SLOTS)


def test_intensity_edits_change_one_linked_slot():
    for case in CASES:
        if case.original.source_key[0] != "neutral":
            assert case.edited.source_key[0] == case.original.source_key[0]
            assert len(case.declared_delta) == 1


def test_emphasis_indexes_the_fixed_utterance():
    for case in CASES:
        for view in (case.original, case.edited):
            assert all(0 <= i < len(case.words) for i in view.expected_plan.emphasis)


def test_cases_are_stable_across_generations_and_seeds_change_draws():
    generate_cases.cache_clear()
    again = generate_cases()
    assert [c.as_dict() for c in again] == [c.as_dict() for c in CASES]
    other = generate_cases(DEFAULT_SEED + 1)
    assert [c.as_dict() for c in other] != [c.as_dict() for c in CASES]
    assert Counter(c.original.source_key for c in other) == Counter(KEY_COUNTS)


@pytest.mark.parametrize("name", PARTITIONS)
def test_partition_sizes_and_coverage(name):
    parts = partition(name)
    assert {s: len(ids) for s, ids in parts.items()} == SPLIT_SIZES[name]
    every = [i for ids in parts.values() for i in ids]
    assert sorted(every) == sorted(c.case_id for c in CASES)


def _keys(ids):
    by_id = {c.case_id: c for c in CASES}
    return {by_id[i].original.source_key for i in ids}


def test_source_key_disjoint_holds_whole_keys_out():
    parts = partition("source_key_disjoint")
    train, dev, test = (_keys(parts[s]) for s in ("train", "dev", "test"))
    assert not (train & test) and not (train & dev) and not (dev & test)
    # every held-out test key's other intensity is in training: the prior has an emotion to transfer
    assert all((e, "normal" if i == "strong" else "strong") in train for e, i in test)


def test_source_emotion_disjoint_holds_whole_emotions_out():
    parts = partition("source_emotion_disjoint")
    train, dev, test = ({k[0] for k in _keys(parts[s])} for s in ("train", "dev", "test"))
    assert not (train & test) and not (train & dev) and not (dev & test)


def test_evidence_sensitivity_matrix_has_432_paired_records():
    cells = matrix_cells()
    assert len(cells) == 432 == len(MATRIX_CONDITIONS) * 24 * len(MATRIX_SEEDS) == len(set(cells))
    assert {c for _, c, _ in cells} == set(partition("source_key_disjoint")["test"])
