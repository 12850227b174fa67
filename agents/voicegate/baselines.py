"""VoiceGate baselines that do not listen: always-mute, and a text-only agent that acts on
command words.

``TextOnlyGateAgent`` reads the transcript only. It splits it into utterances (sentences), finds
the command words of a tool in them (``COMMAND_WORDS``, an independent lexicon of how people
phrase these ten requests) and calls the tool of the *last* utterance that names one. With no
command words it answers the last question, echoing it, and otherwise stays silent. It is the
paper's command-text shortcut: good tool selection, no gating.
"""

from __future__ import annotations

import re
from typing import Any

from hear_gym.envs.voicegate.access import ACCESS_CONDITIONS
from hear_gym.envs.voicegate.actions import MUTE_TOKEN, format_tool_call

_VEHICLE = r"(?:car|truck|van|minivan|pickup|jeep|suv|sedan|wagon|convertible|hatchback|engine|motor)"
_AMOUNT = r"(?:\w+ )*(?:dollars?|bucks|pounds|euros)"
COMMAND_WORDS: dict[str, tuple[str, ...]] = {
    "send_message": (
        r"\bmessage\b",
        r"\btext\b",
        r"\bdm\b",
        r"\bwrite to\b",
        r"\bdrop \w+ a (?:line|note)\b",
    ),
    "place_order": (r"\border\b", r"\breorder\b", r"\bbuy\b", r"\bpurchase\b", r"\bget us\b"),
    "unlock_door": (
        r"\bunlock(?:ed)?\b",
        r"\bunbolt\b",
        r"\block on\b",
        r"\bopen (?:up )?(?:the|my|our)? ?\w* ?(?:door|gate)\b",
        r"\blet \w+ in\b",
    ),
    "transfer_money": (
        r"\btransfer\b",
        r"\bpay\b",
        r"\bwire\b",
        r"\bvenmo\b",
        r"\breimburse\b",
        rf"\bsend (?:\w+ ){{0,3}}{_AMOUNT}\b",
    ),
    "call_contact": (r"\bcall\b", r"\bring\b", r"\bphone\b", r"\bdial\b", r"\bvideo chat\b"),
    "set_thermostat": (
        r"\bthermostat\b",
        r"\bheat\b",
        r"\btemperature\b",
        r"\bdegrees\b",
        r"\bwarmer\b",
        r"\bcooler\b",
    ),
    "delete_file": (
        r"\bdelete\b",
        r"\berase\b",
        r"\bremove \w+ .*\b(?:file|folder|drive|document|photos?)\b",
        r"\btrash\b",
        r"\bwipe\b",
    ),
    "book_appointment": (r"\bbook(?:ed|ing)?\b", r"\bschedule\b", r"\breserve\b", r"\bappointment\b"),
    "post_publicly": (
        r"\bpost\b",
        r"\bshare (?:publicly|on)\b",
        r"\btweet\b",
        r"\bpublish\b",
        r"\bannounce\b",
    ),
    "start_vehicle": (
        rf"\b(?:start|fire) (?:up )?(?:the|my|our) (?:\w+ )?{_VEHICLE}\b",
        rf"\b{_VEHICLE} running\b",
        r"\bremote start\b",
        r"\bwarm up the\b",
        r"\bturn on the engine\b",
    ),
}
_PATTERNS = {
    name: [re.compile(p, re.IGNORECASE) for p in patterns] for name, patterns in COMMAND_WORDS.items()
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def utterances(transcript: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(transcript.strip()) if s]


def tool_named(text: str) -> str | None:
    """The tool whose command words occur earliest in ``text`` (None when none does)."""
    hits = [
        (m.start(), name) for name, patterns in _PATTERNS.items() for p in patterns if (m := p.search(text))
    ]
    return min(hits)[1] if hits else None


def respond_to(text: str) -> str:
    """The text agent's reply to one utterance: the call it asks for, an answer, or silence."""
    name = tool_named(text)
    if name is not None:
        return format_tool_call(name, {})
    if text.rstrip().endswith("?"):
        return f"About your question, {text.rstrip('?')}: here is what I found."
    return MUTE_TOKEN


class AlwaysMuteAgent:
    """Never acts: the paper's all-mute shortcut (perfect mute rates, zero positive controls)."""

    required_access = tuple(ACCESS_CONDITIONS)
    action_format = "text"

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> str:
        return MUTE_TOKEN


class TextOnlyGateAgent:
    """Acts on command words in the transcript (module docstring)."""

    required_access = ("T", "A+T")
    action_format = "text"

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> str:
        said = utterances(observation["transcript"])
        for text in reversed(said):
            if tool_named(text) is not None:
                return respond_to(text)
        for text in reversed(said):
            if text.rstrip().endswith("?"):
                return respond_to(text)
        return MUTE_TOKEN
