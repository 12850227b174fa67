"""Audio probes for DeliveryPlan's source evidence: what can be heard of the source key.

A probe is ``agents.classifier``'s small MLP on one access condition's input for a source clip
(``evidence_audio.render_evidence``: a RAVDESS statement in a source emotion and intensity):

* ``A``: the clip's prosodic features (``hear_gym.speech.features``), what a listener hears;
* ``T``: the derived labels one-hot (emotion, intensity), what the paper's planner reads;
* ``A+T``: both.

It predicts one ``TARGETS`` entry: the 15-way source key, the 8-way emotion or the 2-way
intensity. The grid (``probe_clips``) is every source key x voice x RAVDESS statement; probes
train on ``TRAIN_VOICES`` and are scored on ``TEST_VOICES`` (speakers never heard), with a
bootstrap over (voice, statement) groups, the units that share a speaker's habits.

``ProbePlanner`` is the audio counterpart of the source-label oracle: under access ``A`` it hears
the source clip, takes the key its probe predicts, cites the records that key's plan rests on
and plans that key's row of the plan table (the one step the oracle reads from the label).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.stats import norm

from agents.classifier import NormalizedMLP, train_mlp
from agents.deliveryplan.planners import ShownSide, licensed_records
from hear_gym.envs.deliveryplan.actions import format_reply
from hear_gym.envs.deliveryplan.cases import UTTERANCES
from hear_gym.envs.deliveryplan.evidence_audio import TEST_VOICES, TRAIN_VOICES, render_evidence
from hear_gym.envs.deliveryplan.plan import EMOTIONS, INTENSITIES, SOURCE_KEYS, key_name
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.splits import held_out_keys
from hear_gym.envs.deliveryplan.verifier import PlannerOutput
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features
from hear_gym.stats.bootstrap import Estimate, bootstrap

ACCESS = ("A", "T", "A+T")
TARGETS: dict[str, tuple[str, ...]] = {
    "key": tuple(key_name(*k) for k in SOURCE_KEYS),
    "emotion": EMOTIONS,
    "intensity": INTENSITIES,
}
HIDDEN, EPOCHS, LEARNING_RATE = 16, 200, 0.02  # small: 180 training clips


@dataclass(frozen=True)
class ProbeClip:
    text: str
    emotion: str
    intensity: str
    voice: str

    def label(self, target: str) -> int:
        value = {
            "key": key_name(self.emotion, self.intensity),
            "emotion": self.emotion,
            "intensity": self.intensity,
        }
        return TARGETS[target].index(value[target])


def probe_clips(
    voices: Sequence[str], texts: Sequence[str] = UTTERANCES, keys: Sequence[tuple[str, str]] = SOURCE_KEYS
) -> list[ProbeClip]:
    return [ProbeClip(t, e, i, v) for v in voices for t in texts for e, i in keys]


def training_keys(partition: str) -> tuple[tuple[str, str], ...]:
    """The keys a probe for ``partition`` may hear in training: none it holds out."""
    held = held_out_keys(partition)
    return tuple(k for k in SOURCE_KEYS if k not in held)


def audio_input(clip: ProbeClip, renderer: str) -> np.ndarray:
    return prosodic_features(
        render_evidence(clip.text, clip.emotion, clip.intensity, clip.voice, renderer=renderer)
    )


def label_input(clip: ProbeClip) -> np.ndarray:
    out = np.zeros(len(EMOTIONS) + len(INTENSITIES), dtype=np.float32)
    out[EMOTIONS.index(clip.emotion)] = 1
    out[len(EMOTIONS) + INTENSITIES.index(clip.intensity)] = 1
    return out


ACCESS_INPUTS: dict[str, Callable[[ProbeClip, str], np.ndarray]] = {
    "A": audio_input,
    "T": lambda clip, renderer: label_input(clip),
    "A+T": lambda clip, renderer: np.concatenate([audio_input(clip, renderer), label_input(clip)]),
}


def inputs(clips: Sequence[ProbeClip], access: str, renderer: str = "espeak") -> np.ndarray:
    if access not in ACCESS_INPUTS:
        raise ValueError(f"unknown access {access!r}; conditions: {ACCESS}")
    return np.stack([ACCESS_INPUTS[access](c, renderer) for c in clips]).astype(np.float32)


def labels(clips: Sequence[ProbeClip], target: str) -> np.ndarray:
    if target not in TARGETS:
        raise ValueError(f"unknown probe target {target!r}; targets: {list(TARGETS)}")
    return np.array([c.label(target) for c in clips], dtype=np.int64)


@dataclass(frozen=True)
class AudioProbe:
    target: str
    access: str
    renderer: str
    classifier: NormalizedMLP

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.classifier.predict_features(np.atleast_2d(x))

    def predict_clips(self, clips: Sequence[ProbeClip]) -> np.ndarray:
        return self.predict(inputs(clips, self.access, self.renderer))


def train_probe(
    target: str = "key",
    access: str = "A",
    renderer: str = "espeak",
    voices: Sequence[str] = TRAIN_VOICES,
    seed: int = 0,
    partition: str = "public",
) -> AudioProbe:
    """A probe trained on ``voices`` and the keys ``partition`` trains on (``training_keys``)."""
    clips = probe_clips(voices, keys=training_keys(partition))
    x, y = inputs(clips, access, renderer), labels(clips, target)
    model, mean, std = train_mlp(x, y, len(TARGETS[target]), HIDDEN, EPOCHS, LEARNING_RATE, seed)
    return AudioProbe(target, access, renderer, NormalizedMLP(None, model, mean, std))


def grouped_accuracy(correct: np.ndarray, groups: np.ndarray, seed: int = 0) -> Estimate:
    """Accuracy with a 95% percentile bootstrap over ``groups`` (whole groups resampled)."""
    names = sorted(set(groups.tolist()))
    hits = np.array([correct[groups == g].sum() for g in names], dtype=np.float64)
    sizes = np.array([(groups == g).sum() for g in names], dtype=np.float64)
    return bootstrap(lambda idx: hits[idx].sum(-1) / sizes[idx].sum(-1), len(names), seed=seed)


def clip_groups(clips: Sequence[ProbeClip]) -> np.ndarray:
    return np.array([f"{c.voice}|{c.text}" for c in clips])


def held_out_accuracy(probe: AudioProbe, voices: Sequence[str] = TEST_VOICES) -> Estimate:
    clips = probe_clips(voices)
    correct = probe.predict_clips(clips) == labels(clips, probe.target)
    return grouped_accuracy(correct, clip_groups(clips))


@cache
def default_key_probe(renderer: str = "espeak") -> AudioProbe:
    return train_probe("key", "A", renderer)


class ProbePlanner:
    """An agent for access ``A`` (text actions): plans the plan table's row of the key its probe
    hears in the source clip and cites the records that plan rests on. ``probe`` defaults to the key
    probe trained on the training voices (eSpeak)."""

    required_access = "A"
    action_format = "text"

    def __init__(self, probe: AudioProbe | None = None) -> None:
        self.probe = probe or default_key_probe()
        if self.probe.target != "key" or self.probe.access != "A":
            raise ValueError("a ProbePlanner needs a source-key probe on audio (target 'key', access 'A')")

    def reset(self, seed: int | None = None) -> None:
        """Stateless: each side is planned from what it hears."""

    def heard_key(self, audio: np.ndarray) -> tuple[str, str]:
        emotion, intensity = TARGETS["key"][int(self.probe.predict(prosodic_features(audio))[0])].split("/")
        return emotion, intensity

    def plan(self, observation: dict) -> PlannerOutput:
        audio = np.asarray(observation["audio"])[: int(observation["audio_length"][0])]
        plan = PLAN_TABLE[self.heard_key(audio)]
        return PlannerOutput(ShownSide.read(observation["text"]).cite(licensed_records(plan)), plan)

    def act(self, observation: dict) -> str:
        return format_reply(self.plan(observation))


def single_scalar_accuracies(
    target: str = "key",
    renderer: str = "espeak",
    train_voices: Sequence[str] = TRAIN_VOICES,
    test_voices: Sequence[str] = TEST_VOICES,
    texts: Sequence[str] = UTTERANCES,
) -> dict[str, Estimate]:
    """Held-out accuracy of each acoustic scalar alone (``FEATURE_NAMES``): the shortcut a
    one-cue listener takes. The classifier is the Bayes rule for one scalar under a Gaussian per
    class (its own mean and spread, equal priors), which can carve the axis into any intervals
    the classes' spreads support; cheap, so the smoke test can afford it."""
    train, test = probe_clips(train_voices, texts), probe_clips(test_voices, texts)
    x_train, x_test = inputs(train, "A", renderer), inputs(test, "A", renderer)
    y_train, y_test = labels(train, target), labels(test, target)
    classes = np.arange(len(TARGETS[target]))
    out = {}
    for j, name in enumerate(FEATURE_NAMES):
        column = x_train[:, j].astype(np.float64)
        floor = 1e-3 * (column.std() + 1e-9)  # a class whose scalar never varies still has a spread
        means = np.array([column[y_train == c].mean() for c in classes])
        spreads = np.array([column[y_train == c].std() + floor for c in classes])
        log_likelihood = norm.logpdf(x_test[:, [j]].astype(np.float64), means[None], spreads[None])
        out[name] = grouped_accuracy(log_likelihood.argmax(axis=1) == y_test, clip_groups(test))
    return out


def length_balanced_accuracy(
    renderer: str = "espeak",
    train_voices: Sequence[str] = TRAIN_VOICES,
    test_voices: Sequence[str] = TEST_VOICES,
    texts: Sequence[str] = UTTERANCES,
) -> float:
    """Intensity from clip length alone (speech duration): a Gaussian-per-class rule fitted on
    the training voices' clips, balanced accuracy on the held-out voices' clips."""
    column = FEATURE_NAMES.index("duration_s")
    train, test = probe_clips(train_voices, texts), probe_clips(test_voices, texts)
    x_train, x_test = inputs(train, "A", renderer)[:, column], inputs(test, "A", renderer)[:, column]
    y_train, y_test = labels(train, "intensity"), labels(test, "intensity")
    fits = [(x_train[y_train == c].mean(), x_train[y_train == c].std() + 1e-6) for c in (0, 1)]
    guess = np.argmax([norm.logpdf(x_test, m, s) for m, s in fits], axis=0)
    return float(np.mean([np.mean(guess[y_test == c] == c) for c in (0, 1)]))
