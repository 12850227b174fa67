"""The listening planner: a ``ProbePlanner`` that also hears the edit against the original.

An edit changes the source record's intensity and keeps its emotion, speaker and statement
(``plan_table.edited_key``; neutral, which has no strong take, edits to calm). So the edited clip
is best heard *beside* the original: the emotion is the one both clips carry, and which clip is
the stronger one is a comparison of one speaker with themself, which no single clip allows.

On the original side it plans what the key probe hears, as ``ProbePlanner`` does. On the edit it
names the emotion from both clips (the emotion probe's log-probabilities summed) and the
direction of the change from the difference of their prosodic features (a probe trained on the
training voices' normal/strong pairs), and applies that emotion's change between its two
intensities to its own original plan. It never reads a label: everything it uses is heard.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from agents.classifier import NormalizedMLP, train_mlp
from agents.deliveryplan.audio_probe import (
    EPOCHS,
    HIDDEN,
    LEARNING_RATE,
    TARGETS,
    ProbePlanner,
    audio_input,
    default_key_probe,
    probe_clips,
    train_probe,
    training_keys,
)
from agents.deliveryplan.planners import ShownSide, apply_delta, licensed_records
from hear_gym.envs.deliveryplan.actions import format_reply
from hear_gym.envs.deliveryplan.cases import plan_delta
from hear_gym.envs.deliveryplan.evidence_audio import TRAIN_VOICES
from hear_gym.envs.deliveryplan.plan import EMOTIONS, INTENSITIES
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.verifier import PlannerOutput
from hear_gym.speech.features import prosodic_features

STRENGTHENED = tuple(e for e in EMOTIONS if (e, "strong") in PLAN_TABLE)


def _pair_input(first: np.ndarray, second: np.ndarray, emotion: str) -> np.ndarray:
    onehot = np.zeros(len(EMOTIONS), dtype=np.float32)
    onehot[EMOTIONS.index(emotion)] = 1
    return np.concatenate([second - first, onehot]).astype(np.float32)


@dataclass(frozen=True)
class DirectionProbe:
    """Is the second of two clips (one speaker, one statement, one emotion) the strong one?"""

    classifier: NormalizedMLP

    def second_is_strong(self, first: np.ndarray, second: np.ndarray, emotion: str) -> bool:
        return bool(self.classifier.predict_features(_pair_input(first, second, emotion)[None])[0])


def train_direction_probe(
    renderer: str = "espeak", partition: str = "public", seed: int = 0
) -> DirectionProbe:
    keys = set(training_keys(partition))
    x, y = [], []
    for clip in probe_clips(TRAIN_VOICES, keys=[(e, "normal") for e in STRENGTHENED]):
        if (clip.emotion, "strong") not in keys or (clip.emotion, "normal") not in keys:
            continue
        normal = audio_input(clip, renderer)
        strong = audio_input(type(clip)(clip.text, clip.emotion, "strong", clip.voice), renderer)
        x += [_pair_input(normal, strong, clip.emotion), _pair_input(strong, normal, clip.emotion)]
        y += [1, 0]
    model, mean, std = train_mlp(np.stack(x), np.array(y), 2, HIDDEN, EPOCHS, LEARNING_RATE, seed)
    return DirectionProbe(NormalizedMLP(None, model, mean, std))


@cache
def default_probes(renderer: str = "espeak"):
    return default_key_probe(renderer), train_probe("emotion", "A", renderer), train_direction_probe(renderer)


class ListeningPlanner(ProbePlanner):
    """An agent for access ``A`` (text actions) that hears the edit beside the original."""

    def __init__(self, renderer: str = "espeak") -> None:
        key_probe, self.emotion_probe, self.direction = default_probes(renderer)
        super().__init__(key_probe)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._original: tuple[np.ndarray, PlannerOutput] | None = None

    def plan(self, observation: dict) -> PlannerOutput:
        audio = np.asarray(observation["audio"])[: int(observation["audio_length"][0])]
        features = prosodic_features(audio)
        shown = ShownSide.read(observation["text"])
        if int(observation["step"][0]) == 0 or self._original is None:
            output = super().plan(observation)
            self._original = (features, output)
            return output
        first, original = self._original
        scores = self.emotion_probe.classifier.logits(np.stack([first, features])).log_softmax(-1).sum(0)
        allowed = [TARGETS["emotion"].index(e) for e in STRENGTHENED]
        emotion = TARGETS["emotion"][allowed[int(scores[allowed].argmax())]]
        strong_now = self.direction.second_is_strong(first, features, emotion)
        before, after = (INTENSITIES[0], INTENSITIES[1]) if strong_now else (INTENSITIES[1], INTENSITIES[0])
        delta = plan_delta(PLAN_TABLE[emotion, before], PLAN_TABLE[emotion, after])
        plan = apply_delta(original.plan, delta)
        return PlannerOutput(shown.cite(licensed_records(plan)), plan)

    def act(self, observation: dict) -> str:
        return format_reply(self.plan(observation))
