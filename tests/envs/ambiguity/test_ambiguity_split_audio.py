"""No minimal-pair clip is heard in two splits: a listener that memorized the train clips
(a waveform-hash lookup) learns nothing about dev or test. Two Mandarin subjects that sound
alike (他 and 她, both ta1) once made ten test clips byte-identical to train or dev clips.

Default tier: eSpeak's raw synthesis of every reading (what each renderer starts from) with the
reading's prosodic marks, which fix the rendered clip. Slow tier: the rendered waveforms
themselves, for every renderer the family has (eSpeak and Praat; it refuses the neural voice,
``render.check_renderer``)."""

import hashlib
from collections import defaultdict
from collections.abc import Callable

import pytest

from hear_gym.envs.ambiguity.items import phonological
from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import PhonologicalPair
from hear_gym.envs.ambiguity.render import (
    ESPEAK_LANGUAGE,
    NEUTRAL_SETTINGS,
    check_renderer,
    render_reading,
    script,
)
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech import espeak

VOICE = "m3"  # the env's default voice


def _synthesis_key(reading: SpokenReading, native_phrasing: bool) -> str:
    text = script(reading, native_phrasing).text
    samples = espeak.synthesize(text, VOICE, ESPEAK_LANGUAGE[reading.language], NEUTRAL_SETTINGS)
    marks = f"{reading.pause_after}{reading.stress}{reading.contour}".encode()
    return hashlib.sha256(samples.tobytes() + marks).hexdigest()


def _waveform_key(renderer: str) -> Callable[[SpokenReading], str]:
    return lambda reading: hashlib.sha256(render_reading(reading, VOICE, renderer).tobytes()).hexdigest()


def shared_between_splits(key: Callable[[SpokenReading], str]) -> list[list[tuple[str, str]]]:
    """Groups of (split, transcript) whose readings have the same key and come from two splits."""
    by_key: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for item in all_items():
        if isinstance(item, PhonologicalPair):
            for utterance in item.readings:
                by_key[key(utterance.spoken)].add((item.split, utterance.written))
    return [sorted(group) for group in by_key.values() if len({split for split, _ in group}) > 1]


@pytest.mark.parametrize("native_phrasing", [True, False], ids=["espeak-script", "praat-script"])
def test_no_reading_sounds_the_same_in_two_splits(native_phrasing):
    assert not shared_between_splits(lambda r: _synthesis_key(r, native_phrasing))


def test_the_check_finds_subjects_that_sound_alike(rebuilt_suite):
    """The leaky construction (他 and 她 both subjects) fails the check."""
    rebuilt_suite.setattr(phonological, "_ZH_SUBJECTS", ("他", "她", "小明", "奶奶", "老王", "我弟弟"))
    shared = shared_between_splits(lambda r: _synthesis_key(r, True))
    assert len(shared) >= 5, shared


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["espeak", "praat"])
def test_no_rendered_clip_is_in_two_splits(renderer):
    assert not shared_between_splits(_waveform_key(renderer))


def test_the_neural_voice_cannot_render_a_reading():
    """Every renderer the family can use is covered above: it refuses the neural voice."""
    with pytest.raises(ValueError, match="neural"):
        check_renderer("neural")
