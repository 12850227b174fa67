"""Omission and coreference detection are decided by the words: an ellipsis or a pronoun is in
what the speaker said (C3's context phenomena are text-level; its Mandarin omission items come
from a text corpus), so a text solver trained on the train split may answer them, and does
(docs/ambiguity.md). What must not decide them is anything besides the words' content: the
token count and the clip's length (``test_ambiguity_detection_length.py``), the question and its
options (here), and the clip itself, when the same clip is heard in another split with its
answer (here; slow tier: eSpeak synthesis of about 3,100 detection texts). Each check fails on
a leaky construction."""

import dataclasses
import hashlib
from collections import Counter, defaultdict

import pytest

from hear_gym.envs.ambiguity.items import generator
from hear_gym.envs.ambiguity.items.generator import all_episodes, all_items
from hear_gym.envs.ambiguity.items.model import DetectAndAnswer
from hear_gym.envs.ambiguity.render import ESPEAK_LANGUAGE, NEUTRAL_SETTINGS
from hear_gym.speech import espeak

VOICE = "m3"  # the env's default voice
CHANCE = 0.5  # yes or no, item or control


def _detection(*splits: str):
    return [e for e in all_episodes() if e.task == "detection" and e.split in splits]


def question_structure_accuracy() -> tuple[float, int]:
    """A solver that sees only the question (its prompt and options, in their order), fitted on
    the train split: (held-out accuracy, episodes)."""
    seen: dict[tuple, Counter] = defaultdict(Counter)
    for episode in _detection("train"):
        asked = episode.turns[0].asked
        seen[asked.prompt, asked.options][asked.answer] += 1
    scored = _detection("dev", "test")
    right = 0
    for episode in scored:
        asked = episode.turns[0].asked
        golds = seen.get((asked.prompt, asked.options))
        right += (golds.most_common(1)[0][0] if golds else 0) == asked.answer
    return right / len(scored), len(scored)


def test_the_question_does_not_tell_an_item_from_its_control():
    accuracy, episodes = question_structure_accuracy()
    assert episodes >= 1000
    assert accuracy <= CHANCE + 0.05, accuracy


def test_the_question_check_fails_when_the_control_is_asked_differently(rebuilt_suite):
    """The leaky construction: the control asked with its options the other way round (gold
    "no" first), so the question's form names the answer."""
    episodes = DetectAndAnswer.episodes

    def control_reordered(item):
        detect, control, content = episodes(item)
        asked = control.turns[0].asked
        turn = dataclasses.replace(
            control.turns[0], asked=dataclasses.replace(asked, options=asked.options[::-1], answer=0)
        )
        return detect, dataclasses.replace(control, turns=(turn,)), content

    rebuilt_suite.setattr(DetectAndAnswer, "episodes", control_reordered)
    accuracy, _ = question_structure_accuracy()
    assert accuracy >= 0.95, accuracy


def _clip_key(said, language: str) -> str:
    """eSpeak's synthesis of the turn's utterances: what every renderer of a plain turn starts
    from (a neutral delivery), so texts that sound alike get one key."""
    digest = hashlib.sha256()
    for utterance in said:
        digest.update(
            espeak.synthesize(utterance.written, VOICE, ESPEAK_LANGUAGE[language], NEUTRAL_SETTINGS)
        )
    return digest.hexdigest()


def clips_in_two_splits() -> list[list[tuple[str, str]]]:
    """Groups of (split, item id) whose detection turns (item or control) sound the same and
    come from two splits."""
    by_key: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for item in all_items():
        if isinstance(item, DetectAndAnswer):
            for said in (item.context, item.control):
                by_key[_clip_key(said, item.language)].add((item.split, item.item_id))
    return [sorted(group) for group in by_key.values() if len({split for split, _ in group}) > 1]


@pytest.mark.slow
def test_no_detection_clip_is_heard_in_two_splits():
    assert not clips_in_two_splits()


@pytest.mark.slow
def test_the_clip_check_fails_when_a_draft_is_in_two_splits(rebuilt_suite):
    """The leaky construction: the first test drafts of each cell dealt to train as well."""
    assign = generator._assign

    def reused(key, drafts, test):
        dealt = list(assign(key, drafts, test))
        again = [("train", 900 + i, draft) for i, (split, _, draft) in enumerate(dealt) if split == "test"]
        return dealt + again[:3]

    rebuilt_suite.setattr(generator, "_assign", reused)
    assert clips_in_two_splits()
