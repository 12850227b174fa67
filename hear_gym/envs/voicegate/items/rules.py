"""Constants and shared text helpers of the VoiceGate construction (rules: ``generator.py``)."""

from __future__ import annotations

import re

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.voicegate.items.model import Addressee, Utterance
from hear_gym.envs.voicegate.items.pools import Phrasing, SlotValue, Tool, words

GENERATOR_VERSION = "voicegate-gen-4"
TRAIN_VOICES = ("f1", "f3", "f4", "m1", "m2", "m4")
TEST_VOICES = ("f2", "f5", "m3", "m7")
SPLIT_VOICES = {"train": TRAIN_VOICES, "test": TEST_VOICES}
SWITCH_PER_TOOL, SWITCH_TEST_PER_TOOL = 40, 8
SIDE_TALK_ITEMS, SIDE_TALK_EXTRA = 395, (0, 3, 5)
SELF_TALK_ITEMS = 223
SWITCH_GAP_MS = 600.0
# every two-utterance input but the switch joins its utterances as the paper's same-speaker
# condition does, with no inserted silence: a pause must not tell the families apart
JOINED_GAP_MS = 0.0
SIDE_TALK_CUES = ("none", "turned_away")
SWITCH_CONDITIONS = ("same_speaker", "switch", "text_only")
SIDE_TALK_CONFIGS = tuple(
    f"{order}-{a}-{b}"
    for order in ("assistant_first", "bystander_first")
    for a in ("tool", "conversational")
    for b in ("tool", "conversational")
)
CUE_CONDITIONS = tuple(
    f"{source}-{field}-{gap}ms/{rendering}"
    for source in ("same", "different")
    for field in ("near", "far")
    for gap in (0, 600)
    for rendering in ("trigger_only", "scene_consistent")
)
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "my",
        "me",
        "our",
        "your",
        "for",
        "of",
        "on",
        "in",
        "at",
        "and",
        "or",
        "with",
        "it",
        "this",
        "that",
        "some",
        "is",
        "be",
        "please",
        "can",
        "could",
        "you",
        "i",
        "we",
        "up",
        "off",
    ]
)
MAX_ATTEMPTS = 10_000
# a comma's clause pause (about 0.18 s) weighs as six characters of speech: measured on eSpeak
# renderings of the train inputs, the pause alone (four characters at 0.053 s) still left
# self-talk audibly longer than the act inputs (duration, train balanced accuracy 0.57)
COMMA_CHARACTERS = 6
# A comma is a clause pause, an extra speech onset. Self-talk's frames ("If ..., ", "Note to self,
# ...") and side-talk's openers carry commas, so the act inputs need them too, or counting onsets
# tells the families apart. Commas per speaker-switch command (0, 1, 2, 3; its context's opener,
# its trigger's opener, a comma wrapper), as a share of 100: between self-talk's distribution
# (about 32/53/15/0 before its companions) and side-talk's (42/8/44/6)
SWITCH_COMMA_SHARES = (33, 27, 35, 5)
SWITCH_COMMA_DRAW = tuple(n for n, share in enumerate(SWITCH_COMMA_SHARES) for _ in range(share))
# share of the monologues with a comma in their frame whose other sentence holds one too: it
# moves self-talk toward side-talk's two-comma inputs (giving one to a comma-free frame would
# leave too few inputs without any)
COMPANION_COMMA_SHARE = 0.5


def spoken_length(text: str) -> int:
    """How long ``text`` takes to say, in characters: each comma's pause counts as a few."""
    return len(text) + COMMA_CHARACTERS * text.count(",")


def fill(core: str, tool_: Tool, rng: StableRng) -> tuple[str, dict[str, SlotValue]]:
    filled: dict[str, SlotValue] = {}

    def slot(match: re.Match) -> str:
        name = match.group(1)
        filled.setdefault(name, rng.choice(tool_.slots[name]))
        return filled[name].words

    return re.sub(r"\{([a-z_]+)\}", slot, core), filled


def wrap(wrapper: str, core: str) -> str:
    return wrapper.replace("{Core}", core[:1].upper() + core[1:]).replace("{core}", core)


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


def content_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for w in words(text) if w not in STOP))


def commas(text: str) -> int:
    return text.count(",")


def command(
    tool_: Tool, ph: Phrasing, rng: StableRng, addressee: Addressee, comma_wrapper: bool | None = None
) -> Utterance:
    """A trigger: a wrapper around a filled core; ``comma_wrapper``: only wrappers with (True) or
    without (False) a comma, None: any."""
    core, filled = fill(rng.choice(tool_.cores), tool_, rng)
    wrappers = [w for w in ph.trigger_wrappers if comma_wrapper is None or (commas(w) > 0) == comma_wrapper]
    return Utterance(
        wrap(rng.choice(wrappers), core),
        addressee,
        tool_.name,
        tool_.call_params(filled),
        content_words(core),
    )


def split_of(index: int, test: set[int]) -> str:
    return "test" if index in test else "train"


def n_test(n: int) -> int:
    return round(n / 5)
