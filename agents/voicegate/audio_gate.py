"""The trained VoiceGate audio gate: "was the last utterance said to me, by my wearer?"

A small torch MLP on ``gate_features`` (speaker and room change between the input's two
segments, the last segment's own room colouring, the pause). Training examples come from the
*train* split only, in one of two designs (``TRAINING_SETS``):

* ``switch`` (the benchmark's own training partition): speaker-switch pairs (same-speaker
  trigger: for me; switched trigger: not) and side-talk items (for me iff the last utterance is
  the assistant-directed one). Source, distance and gap change together in these pairs.
* ``cue_balanced`` (the paper's Appendix H control): instead of the pairs, scene-consistent
  variants of every train command with field (near/far) crossed with gap (0/600 ms) in both
  labels, labelled by source only (the wearer's trigger is for me even from the far field),
  two variants per command rotating through the combinations; side-talk items as above.

The held-out report uses the test split, over all rows and per family (speaker-switch pairs or
cue variants, side-talk). A checkpoint is one safetensors file with the normalization and the
config and report as JSON metadata.

``AudioGateAgent`` combines the gate with the text agent's command reading: if the gate hears
the last utterance as addressed, it responds to it; if not, it responds to the first utterance
when that one is a request or a question (side-talk with the assistant-directed part first),
and otherwise stays silent. Text-only inputs (no audio) go straight to the text reading.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import track

from agents.classifier import NormalizedMLP, train_mlp
from agents.voicegate.baselines import TextOnlyGateAgent, respond_to, tool_named, utterances
from hear_gym.envs.voicegate.actions import MUTE_TOKEN
from hear_gym.envs.voicegate.items.generator import cue_variants, select_items
from hear_gym.envs.voicegate.items.model import Addressee, Item
from hear_gym.envs.voicegate.scenes import render_item
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.change_features import GATE_FEATURES, gate_features
from hear_gym.speech.renderers import make_renderer

GATE_CLASSES = ("for_me", "not_for_me")


@dataclass(frozen=True)
class GateConfig:
    renderer: str = "espeak"
    hidden: int = 32
    epochs: int = 300
    learning_rate: float = 0.02
    seed: int = 0
    limit_per_family: int | None = None  # fewer items per family, evenly spread (tests)
    training: str = "switch"  # a key of TRAINING_SETS
    side_talk_cue: str = "none"  # the side-talk rendering (generator docstring)


def _switch_pairs(split: str, config: GateConfig) -> list[tuple[Item, int]]:
    """Same-speaker trigger: for me (0); switched trigger: not for me (1)."""
    return [
        (item, int(item.condition == "switch"))
        for item in select_items("speaker_switch", split)
        if item.condition in ("same_speaker", "switch")
    ]


def _cue_balanced(split: str, config: GateConfig) -> list[tuple[Item, int]]:
    """Scene-consistent field x gap variants, two per command in rotation, labelled by source."""
    by_command: dict[str, list[Item]] = {}
    for item in cue_variants(split):
        if item.cues["rendering"] == "scene_consistent":
            by_command.setdefault(item.group, []).append(item)
    chosen = [
        combos[(2 * c + j) % len(combos)] for c, combos in enumerate(by_command.values()) for j in (0, 1)
    ]
    return [(item, int(item.cues["source"] != "same")) for item in chosen]


def _side_talk(split: str, config: GateConfig) -> list[tuple[Item, int]]:
    """For me iff the last utterance is the assistant-directed one."""
    return [
        (item, int(item.utterances[-1].addressee is not Addressee.ASSISTANT))
        for item in select_items("side_talk", split, side_talk_cue=config.side_talk_cue)
    ]


TRAINING_SETS = {"switch": (_switch_pairs, _side_talk), "cue_balanced": (_cue_balanced, _side_talk)}


def labelled_items(split: str, config: GateConfig) -> list[tuple[Item, int]]:
    """The (item, label) rows of ``split`` under ``config.training`` (label 0: for me)."""
    if config.training not in TRAINING_SETS:
        raise ValueError(f"training must be one of {sorted(TRAINING_SETS)}, got {config.training!r}")
    labelled = []
    for source in TRAINING_SETS[config.training]:
        rows = source(split, config)
        if config.limit_per_family and config.limit_per_family < len(rows):
            # spread over the rows: a prefix would hold one tool or one side-talk configuration
            keep = np.linspace(0, len(rows) - 1, config.limit_per_family).round().astype(int)
            rows = [rows[i] for i in keep]
        labelled += rows
    return labelled


def examples(split: str, cache: RenderCache, config: GateConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, family of each row) of ``split`` (rows in ``labelled_items`` order)."""
    labelled = labelled_items(split, config)
    x = [
        gate_features(render_item(item, cache)[0])
        for item, _ in track(labelled, description=f"gate features ({split})")
    ]
    families = np.array([item.family.value for item, _ in labelled])
    return np.stack(x), np.array([label for _, label in labelled]), families


class AudioGate(NormalizedMLP):
    """The trained gate (``config``: its ``GateConfig``)."""

    def last_is_for_me(self, waveform: np.ndarray) -> bool:
        return int(self.predict_features(gate_features(waveform)[None, :])[0]) == 0

    def save(self, path: Path) -> None:
        self.save_checkpoint(
            path,
            {
                "kind": "voicegate-audio-gate",
                "config": json.dumps(asdict(self.config)),
                "features": json.dumps(GATE_FEATURES),
                "report": json.dumps(self.report),
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> AudioGate:
        meta = cls.checkpoint_metadata(path)
        if meta.get("kind") != "voicegate-audio-gate":
            raise ValueError(f"{path} is not a VoiceGate audio-gate checkpoint")
        if json.loads(meta["features"]) != list(GATE_FEATURES):
            raise ValueError(f"{path} was trained on other features than this version computes")
        config = GateConfig(**json.loads(meta["config"]))
        model, mean, std = cls.load_weights(path, config.hidden, len(GATE_CLASSES))
        return cls(config, model, mean, std, json.loads(meta.get("report", "{}")))


def accuracy(gate: AudioGate, x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return gate.class_report(x, y, GATE_CLASSES)


def family_accuracy(gate: AudioGate, x: np.ndarray, y: np.ndarray, families: np.ndarray) -> dict[str, dict]:
    """``accuracy`` over all rows (``"all"``) and per family of the rows."""
    return {
        "all": accuracy(gate, x, y),
        **{f: accuracy(gate, x[families == f], y[families == f]) for f in dict.fromkeys(families)},
    }


def train_gate_from_options(out: Path, **options) -> AudioGate:
    """``hear_gym.components:train_gate``: a ``GateConfig`` from options, trained, saved to ``out``."""
    return train_gate(GateConfig(**options), out)


def train_gate(config: GateConfig, out: Path | None = None, cache: RenderCache | None = None) -> AudioGate:
    """Train on the train split, report held-out accuracy on the test split, optionally save.
    ``cache`` (of ``config.renderer``) lets runs share rendered speech."""
    cache = cache or RenderCache(make_renderer(config.renderer), max_bytes=64 * 2**20)
    train, test = examples("train", cache, config), examples("test", cache, config)
    model, mean, std = train_mlp(
        train[0], train[1], len(GATE_CLASSES), config.hidden, config.epochs, config.learning_rate, config.seed
    )
    gate = AudioGate(config, model, mean, std)
    gate.report = {"train": family_accuracy(gate, *train), "test": family_accuracy(gate, *test)}
    if out is not None:
        gate.save(out)
    return gate


class AudioGateAgent:
    """The gate in front of the text agent's command reading (module docstring)."""

    required_access = ("A+T",)
    action_format = "text"

    def __init__(self, gate: AudioGate) -> None:
        self.gate = gate
        self.text = TextOnlyGateAgent()

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> AudioGateAgent:
        return cls(AudioGate.load(path))

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> str:
        length = int(observation["audio_length"][0])
        if length == 0:
            return self.text.act(observation)
        said = utterances(observation["transcript"])
        if self.gate.last_is_for_me(observation["audio"][:length]):
            return respond_to(said[-1])
        first = said[0]
        if len(said) > 1 and (tool_named(first) or first.rstrip().endswith("?")):
            return respond_to(first)
        return MUTE_TOKEN
