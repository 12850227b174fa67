"""The contrast groups: Table 1 counts, held-out domains, balanced onsets, branch ids that do not
encode the action, and a generator that is a pure function of its version and data."""

from collections import Counter
from itertools import combinations

from hear_gym.envs.onset.groups import generator
from hear_gym.envs.onset.groups.generator import all_groups, item_ids, select_groups, transcripts
from hear_gym.envs.onset.groups.model import ACTION_PAIRS, N_PREFIXES, ONSET_FRACTIONS, parse_item_id

TEST_DOMAINS = {"book_uncertainty", "calendar_noise", "message_barge_in", "timer_urgency"}


def test_table_1_counts_match_the_paper():
    expected = {"train": (208, 416, 2080), "dev": (52, 104, 520), "test": (80, 160, 1600)}
    for split, (groups, trajectories, records) in expected.items():
        chosen = select_groups(split)
        assert len(chosen) == groups
        assert 2 * len(chosen) == trajectories
        assert sum(2 * len(g.renderings) * N_PREFIXES for g in chosen) == records
    assert len(item_ids("test")) == 320 and len(item_ids("train")) == 416


def test_test_domains_are_held_out_whole():
    assert {g.domain for g in select_groups("test")} == TEST_DOMAINS
    assert not TEST_DOMAINS & {g.domain for g in select_groups("train") + select_groups("dev")}
    assert {g.domain for g in select_groups("train")} == {g.domain for g in select_groups("dev")}
    assert all(g.renderings == ("clean",) for g in select_groups("train") + select_groups("dev"))


def test_onsets_are_balanced_within_split_and_action_pair():
    for split in ("train", "dev", "test"):
        chosen = select_groups(split)
        overall = Counter(g.onset_fraction for g in chosen)
        assert set(overall) == set(ONSET_FRACTIONS) and max(overall.values()) - min(overall.values()) <= 1
        for pair in ACTION_PAIRS:
            bucket = Counter(g.onset_fraction for g in chosen if g.action_pair == pair)
            assert max(bucket.values()) - min(bucket.get(f, 0) for f in ONSET_FRACTIONS) <= 1


def test_pairs_contrast_actions_and_branch_ids_do_not_encode_them():
    by_branch = Counter()
    for group in all_groups():
        a, b = group.branches
        assert a.action != b.action and (a.branch_id, b.branch_id) == ("a", "b")
        by_branch.update((br.branch_id, br.action) for br in group.branches)
    for action in {action for _, action in by_branch}:
        assert by_branch[("a", action)] > 0.35 * (by_branch[("a", action)] + by_branch[("b", action)])
        assert by_branch[("b", action)] > 0.35 * (by_branch[("a", action)] + by_branch[("b", action)])
    for group in all_groups():
        assert group.action_pair[0] not in group.group_id and group.branches[0].action not in str(
            group.item_ids()
        )


def test_transcripts_are_distinct_within_a_domain_and_generation_is_pure():
    for domain in {g.domain for g in all_groups()}:
        texts = [g.transcript for g in all_groups() if g.domain == domain]
        assert len(set(texts)) == len(texts)
        assert set(texts) <= set(transcripts(domain))
    before = [g.as_record() for g in all_groups()]
    generator.all_groups.cache_clear()
    assert [g.as_record() for g in generator.all_groups()] == before


def test_item_ids_parse_and_bad_ones_are_refused():
    assert parse_item_id("book_uncertainty-03/a/noise15") == ("book_uncertainty-03", "a", "noise15")
    for bad in ("book_uncertainty-03", "x/c/clean", "x/a/noisy"):
        try:
            parse_item_id(bad)
        except ValueError as exc:
            assert "not an Onset item id" in str(exc)
        else:
            raise AssertionError(bad)


def test_pitch_range_alone_does_not_name_the_action_but_the_whole_delivery_does():
    """Every action shares its pitch range with another action, within one utterance's jitter
    (in onset-1 the five ranges sat apart, and the F0 spread of a prefix's tail alone named the
    action as well as the audio probe); every two actions still differ in contour, or in pitch
    level or range by more than a speaker's and an utterance's variation together."""
    spec = generator.deliveries()
    actions, jitter, speaker = spec["actions"], spec["utterance_jitter"], spec["speaker"]
    for name, delivery in actions.items():
        assert any(
            abs(delivery["range"] - other["range"]) <= jitter["range"]
            for other_name, other in actions.items()
            if other_name != name
        ), name
    for (name, a), (other_name, b) in combinations(actions.items(), 2):
        assert (
            a["contour"] != b["contour"]
            or abs(a["pitch"] - b["pitch"]) > speaker["pitch_offset"] + jitter["pitch"]
            or abs(a["range"] - b["range"]) > speaker["range_offset"] + jitter["range"]
        ), (name, other_name)
