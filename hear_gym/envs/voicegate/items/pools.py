"""Validated phrasing pools behind VoiceGate items (``hear_gym/envs/voicegate/items/data/*.json``).

Two data files, both public knowledge about the task (nothing here says which item is which):

* ``tools.json``: the ten consequential tools. Each has a JSON-schema ``parameters`` object, a
  pool of command ``cores`` and ``contexts``. A core is a bare, lowercase imperative verb
  phrase with ``{slot}`` placeholders ("unlock the {door}") that reads after "please " and after
  "I should probably "; every slot is a parameter name and draws from ``slots[name]`` (spoken
  words + the JSON value the call would carry, which must validate against the parameter's
  schema). A context is one sentence the wearer says before the trigger: it sets up the tool's
  topic without itself asking for anything.
* ``phrasing.json``: shared wrappers that turn a core into a spoken trigger, vocative names for
  bystander-directed side-talk, discourse-marker openers ("Okay, ...") that suit either
  listener, conversational questions that suit either addressee (with the
  topic words the side-talk judge looks for), the seven self-talk frames, and self-directed
  ``asides`` ("Hmm.", "I keep forgetting things lately.") that ask nothing of anyone: with a
  tool's contexts they are the other sentence of a two-sentence self-talk monologue.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TOOL_NAMES = (
    "send_message",
    "place_order",
    "unlock_door",
    "transfer_money",
    "call_contact",
    "set_thermostat",
    "delete_file",
    "book_appointment",
    "post_publicly",
    "start_vehicle",
)
SELF_TALK_FRAMES = (
    "planning",
    "regret",
    "quotation",
    "sarcasm",
    "rhetorical_question",
    "conditional",
    "metaphor",
)
_SLOT = re.compile(r"\{([a-z_]+)\}")
_WORD = re.compile(r"[a-z0-9']+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def words(text: str) -> list[str]:
    """Lowercase word tokens (the unit the judge and the pools' overlap checks use)."""
    return _WORD.findall(text.lower())


class SlotValue(_Strict):
    words: str = Field(min_length=1)  # what the speaker says
    value: Any  # what the tool call carries


class Tool(_Strict):
    name: str
    description: str = Field(min_length=10)
    parameters: dict[str, Any]
    cores: list[str] = Field(min_length=6)
    slots: dict[str, list[SlotValue]]
    contexts: list[str] = Field(min_length=8)

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in TOOL_NAMES:
            raise ValueError(f"unknown tool {name!r}; tools: {TOOL_NAMES}")
        return name

    @field_validator("parameters")
    @classmethod
    def _schema(cls, schema: dict) -> dict:
        jsonschema.Draft202012Validator.check_schema(schema)
        if schema.get("type") != "object" or not schema.get("properties"):
            raise ValueError("parameters must be an object schema with properties")
        return schema

    @field_validator("cores", "contexts")
    @classmethod
    def _unique(cls, texts: list[str]) -> list[str]:
        if len(set(texts)) != len(texts):
            raise ValueError("duplicate entries")
        return texts

    @model_validator(mode="after")
    def _slots_fit(self) -> Tool:
        properties = self.parameters["properties"]
        for core in self.cores:
            if core != core.lower() or core.rstrip() != core or core[-1] in ".!?,":
                raise ValueError(f"core {core!r}: bare lowercase verb phrase, no final punctuation")
            for slot in _SLOT.findall(core):
                if slot not in self.slots:
                    raise ValueError(f"core {core!r} uses slot {slot!r} with no value pool")
        for slot, values in self.slots.items():
            if slot not in properties:
                raise ValueError(f"slot {slot!r} is not a parameter of {self.name}")
            if len(values) < 6:
                raise ValueError(f"slot {slot!r} needs at least 6 values")
            validator = jsonschema.Draft202012Validator(properties[slot])
            for value in values:
                if not validator.is_valid(value.value):
                    raise ValueError(
                        f"slot {slot!r}: value {value.value!r} does not fit the parameter schema"
                    )
        for context in self.contexts:
            if context[-1] not in ".!?":
                raise ValueError(f"context {context!r} must be one full sentence")
        return self

    def call_params(self, filled: dict[str, SlotValue]) -> dict[str, Any]:
        return {slot: value.value for slot, value in filled.items()}


class ConversationalQuestion(_Strict):
    text: str
    topic_words: list[str] = Field(min_length=2)

    @model_validator(mode="after")
    def _topic_in_text(self) -> ConversationalQuestion:
        missing = [w for w in self.topic_words if w not in words(self.text)]
        if missing:
            raise ValueError(f"topic words {missing} do not occur in {self.text!r}")
        return self


class MetaphorLine(_Strict):
    tool: str
    text: str


class Phrasing(_Strict):
    trigger_wrappers: list[str] = Field(min_length=5)
    vocatives: list[str] = Field(min_length=8)
    openers: list[str] = Field(min_length=8)
    questions: list[ConversationalQuestion] = Field(min_length=40)
    self_talk: dict[str, list[str]]
    metaphors: list[MetaphorLine] = Field(min_length=40)
    asides: list[str] = Field(min_length=12)

    @field_validator("trigger_wrappers")
    @classmethod
    def _wrappers(cls, wrappers: list[str]) -> list[str]:
        for wrapper in wrappers:
            if wrapper.count("{core}") + wrapper.count("{Core}") != 1:
                raise ValueError(f"wrapper {wrapper!r} must hold exactly one {{core}} or {{Core}}")
        return wrappers

    @model_validator(mode="after")
    def _frames(self) -> Phrasing:
        expected = set(SELF_TALK_FRAMES) - {"metaphor"}
        if set(self.self_talk) != expected:
            raise ValueError(f"self_talk frames must be exactly {sorted(expected)}")
        for frame, templates in self.self_talk.items():
            if len(templates) < 6 or any(t.count("{core}") != 1 for t in templates):
                raise ValueError(f"frame {frame!r}: at least 6 templates, each with one {{core}}")
        for line in self.metaphors:
            if line.tool not in TOOL_NAMES:
                raise ValueError(f"metaphor for unknown tool {line.tool!r}")
        for aside in self.asides:
            if aside[-1] not in ".!?":
                raise ValueError(f"aside {aside!r} must be one full sentence")
        per_tool = {name: sum(m.tool == name for m in self.metaphors) for name in TOOL_NAMES}
        if min(per_tool.values()) < 4:
            raise ValueError(f"every tool needs at least 4 metaphors: {per_tool}")
        return self


class ToolSet(_Strict):
    tools: list[Tool]

    @model_validator(mode="after")
    def _all_tools(self) -> ToolSet:
        if tuple(t.name for t in self.tools) != TOOL_NAMES:
            raise ValueError(f"tools must be exactly {TOOL_NAMES}, in that order")
        return self


def _read(name: str) -> dict:
    return json.loads(
        resources.files("hear_gym.envs.voicegate.items").joinpath("data", name).read_text("utf-8")
    )


@cache
def tool_set() -> ToolSet:
    return ToolSet.model_validate(_read("tools.json"))


@cache
def phrasing() -> Phrasing:
    return Phrasing.model_validate(_read("phrasing.json"))


def tool(name: str) -> Tool:
    for candidate in tool_set().tools:
        if candidate.name == name:
            return candidate
    raise KeyError(f"unknown tool {name!r}; tools: {TOOL_NAMES}")


def tool_inventory() -> list[dict[str, Any]]:
    """The tool list every agent sees: name, description and parameter schema."""
    return [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in tool_set().tools
    ]
