"""The Ambiguity suite's invariants: the paper's counts, minimal pairs that text cannot decide,
disjoint splits, well-formed questions, detection controls and balanced gold positions."""

from collections import Counter, defaultdict

import pytest

from hear_gym.envs.ambiguity.items.generator import (
    CONTRASTS,
    PAPER_COUNTS,
    all_episodes,
    all_items,
    item_ids,
    split_sizes,
)
from hear_gym.envs.ambiguity.items.model import (
    AUDIO_DECIDED,
    MAX_OPTIONS,
    Contrast,
    DetectAndAnswer,
    Phenomenon,
    PhonologicalPair,
    Question,
    bare_words,
)
from hear_gym.envs.ambiguity.spoken import tokenize


def _cell(item) -> tuple[Phenomenon, str]:
    return item.episodes()[0].phenomenon, item.language


def test_test_split_has_the_papers_counts():
    counts = Counter(_cell(item) for item in all_items() if item.split == "test")
    assert counts == Counter(PAPER_COUNTS)
    assert sum(counts.values()) == 1079
    for split in ("dev", "train"):
        built = Counter(_cell(item) for item in all_items() if item.split == split)
        for cell, count in PAPER_COUNTS.items():
            rounding = len(CONTRASTS.get(cell, ()))  # each contrast rounds its dev share up
            assert 0 < built[cell] <= split_sizes(count)[split] + rounding, (split, cell)


def test_contrasts_share_each_cell_evenly():
    for (phenomenon, language), contrasts in CONTRASTS.items():
        shares = Counter(
            i.contrast for i in all_items() if i.split == "test" and _cell(i) == (phenomenon, language)
        )
        assert set(shares) == set(contrasts)
        assert max(shares.values()) - min(shares.values()) <= 1


def test_every_phonological_item_is_a_minimal_pair():
    pairs = [i for i in all_items() if isinstance(i, PhonologicalPair)]
    assert pairs
    for pair in pairs:
        a, b = pair.readings
        assert a.spoken is not None and b.spoken is not None
        episodes = pair.episodes()
        assert [e.turns[0].asked.answer for e in episodes] == [0, 1]
        assert episodes[0].turns[0].asked.options == episodes[1].turns[0].asked.options
        assert bare_words(a.written) == a.spoken.text  # the bare transcript is exactly what is spoken
        if pair.contrast in AUDIO_DECIDED:
            # same words, different delivery: nothing but the audio (and punctuation) can decide
            assert bare_words(b.written) == b.spoken.text == a.spoken.text
            assert a.spoken != b.spoken
        else:
            # heterographs: one sound (the same reading, so the same audio), two spellings of one token
            assert pair.contrast == Contrast.HETEROGRAPH
            assert a.spoken == b.spoken
            ta, tb = (tokenize(bare_words(u.written), pair.language) for u in (a, b))
            assert len(ta) == len(tb) and sum(x != y for x, y in zip(ta, tb, strict=True)) in (1, 2)


def test_splits_share_no_transcript():
    seen: dict[tuple[str, ...], str] = {}
    for episode in all_episodes():
        if episode.phenomenon == Phenomenon.MULTI_TURN:
            continue  # dialogues are drawn per item: their turns recur by design
        said = tuple(u.written for u in episode.turns[0].said)
        assert seen.setdefault(said, episode.split) == episode.split, said


def test_ids_are_unique_and_questions_well_formed():
    ids = [e.episode_id for e in all_episodes()]
    assert len(ids) == len(set(ids))
    assert set(item_ids("all")) == set(ids)
    assert len({i.item_id for i in all_items()}) == len(all_items())
    for episode in all_episodes():
        for turn in episode.turns:
            assert isinstance(turn.asked, Question) and turn.asked.prompt
            assert 2 <= len(turn.asked.options) <= MAX_OPTIONS
            assert all(u.written.strip() for u in turn.said)


def test_detection_controls_flip_the_answer():
    for item in (i for i in all_items() if isinstance(i, DetectAndAnswer)):
        detect, control, content = item.episodes()
        assert detect.turns[0].asked.answer == 0 and control.turns[0].asked.answer == 1
        assert control.control and not detect.control
        assert detect.turns[0].said != control.turns[0].said
        assert content.task in ("completion", "resolution")


def test_multi_turn_dialogues_repeat_the_first_question():
    lengths = defaultdict(list)
    for episode in (e for e in all_episodes() if e.phenomenon == Phenomenon.MULTI_TURN):
        first, last = episode.turns[0].asked, episode.turns[-1].asked
        assert (first.options, first.answer) == (last.options, last.answer)
        lengths[episode.language].append(len(episode.turns))
    assert max(lengths["en"]) <= 9 and max(lengths["zh"]) <= 16
    assert sum(lengths["zh"]) / len(lengths["zh"]) > sum(lengths["en"]) / len(lengths["en"])


@pytest.mark.parametrize("task", ["explanation", "completion", "resolution", "recall"])
def test_gold_positions_are_balanced(task):
    """A policy that always picks one position stays near chance."""
    for language in ("en", "zh"):
        golds = Counter(
            e.turns[-1].asked.answer for e in all_episodes() if e.task == task and e.language == language
        )
        n_options = len(next(e for e in all_episodes() if e.task == task).turns[-1].asked.options)
        total = sum(golds.values())
        assert len(golds) == n_options
        assert max(golds.values()) / total < 1.0 / n_options + 0.12, (language, golds)
