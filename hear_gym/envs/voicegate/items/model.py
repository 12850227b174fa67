"""Typed VoiceGate items: what is said, by whom, to whom, how it sounds, and the target action.

An item is one condition-level input (the paper's unit of scoring). Items that share words
share a ``group`` (a speaker-switch pair's three conditions, a held-out command's sixteen
cue-validity variants), which is the unit of the group bootstrap.

What an agent may observe (the words, and audio rendered from ``segments``) is kept apart from
what it must not (``addressee``, ``source``, ``placement``, ``target``, ``cues``): the env puts
the latter in ``info`` only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from hear_gym.core.records import SharedRecord


class Family(str, Enum):
    SPEAKER_SWITCH = "speaker_switch"
    SIDE_TALK = "side_talk"
    SELF_TALK = "self_talk"
    CUE_VALIDITY = "cue_validity"


class Addressee(str, Enum):
    ASSISTANT = "assistant"
    BYSTANDER = "bystander"  # said to a person nearby
    SELF = "self"  # monologue


class Source(str, Enum):
    WEARER = "wearer"  # the session initiator, the assistant's authorized user
    BYSTANDER = "bystander"


class Placement(str, Enum):
    """How a segment reaches the wearable's microphone (see ``hear_gym.envs.voicegate.scenes``)."""

    NEAR = "near"  # near field, facing the microphone
    FAR = "far"  # far field across the room
    TURNED_AWAY = "turned_away"  # the wearer's head turned toward someone else


NO_UTTERANCE = -1  # records: the target or action addresses no utterance


class TargetKind(str, Enum):
    MUTE = "mute"
    TOOL = "tool"
    ANSWER = "answer"


SPLITS = ("train", "test")


@dataclass(frozen=True)
class Utterance:
    text: str
    addressee: Addressee
    tool: str | None = None  # the tool the words ask for (tool-like content), else None
    params: dict[str, Any] | None = None  # the call the words specify
    topic_words: tuple[str, ...] = ()  # content words the side-talk judge matches answers on


@dataclass(frozen=True)
class Segment:
    utterance: int  # index into Item.utterances
    source: Source
    voice: str
    placement: Placement


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    tool: str | None = None  # for TOOL
    utterance: int | None = None  # for ANSWER: the utterance the answer must address

    def __post_init__(self) -> None:
        if (self.kind is TargetKind.TOOL) != (self.tool is not None):
            raise ValueError("a tool target names its tool, and only a tool target does")
        if (self.kind is TargetKind.ANSWER) != (self.utterance is not None):
            raise ValueError("an answer target names its utterance, and only an answer target does")


@dataclass(frozen=True)
class Item:
    item_id: str
    family: Family
    condition: str
    split: str
    group: str
    utterances: tuple[Utterance, ...]
    segments: tuple[Segment, ...] | None  # None: the text-only condition (no audio)
    gaps_ms: tuple[float, ...]  # silence after segment i, one per boundary
    target: Target
    cues: dict[str, Any] = field(default_factory=dict)  # construction facts, e.g. vocative

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        if self.segments is not None and len(self.gaps_ms) != len(self.segments) - 1:
            raise ValueError(
                f"{self.item_id}: {len(self.segments)} segments need "
                f"{len(self.segments) - 1} gaps, got {len(self.gaps_ms)}"
            )

    @property
    def has_audio(self) -> bool:
        return self.segments is not None

    @property
    def transcript(self) -> str:
        """What an ASR transcript of the input would read: the utterances in order."""
        return " ".join(u.text for u in self.utterances)

    def command_tool(self) -> str | None:
        """The tool the input's command words ask for: the trigger's, the self-talk core's, or the
        assistant-directed side-talk request's."""
        for utterance in reversed(self.utterances):
            if utterance.tool and utterance.addressee is not Addressee.BYSTANDER:
                return utterance.tool
        return None

    def as_record(self) -> dict[str, Any]:
        """JSON-ready description (for manifests, ``info`` and results files), the caller's own
        copy. Numbers are never null (vector envs batch ``info`` numbers into typed arrays): an
        absent utterance index is ``NO_UTTERANCE``."""
        return self._record.copy()

    @cached_property
    def _record(self) -> SharedRecord:
        # built once per item: ``asdict`` was most of a text-only step
        record = asdict(self)
        record["family"] = self.family.value
        record["target"] = {
            "kind": self.target.kind.value,
            "tool": self.target.tool,
            "utterance": NO_UTTERANCE if self.target.utterance is None else self.target.utterance,
        }
        record["utterances"] = [
            {**asdict(u), "addressee": u.addressee.value, "topic_words": list(u.topic_words)}
            for u in self.utterances
        ]
        if self.segments is not None:
            record["segments"] = [
                {**asdict(s), "source": s.source.value, "placement": s.placement.value} for s in self.segments
            ]
        record["gaps_ms"] = list(self.gaps_ms)
        return SharedRecord(record)
