"""Small torch classifiers that listen to a user turn: the two-stage T+S^ inferrer and the
generic-affect (SER-style) baselines.

* ``concern`` probe: resolved vs unresolved, from the turn's prosodic features and the same
  relative to the speaker's opening request (the dialogue context a listener has). Wrapped by
  ``ConcernInferrer``, which writes one sentence for the decision stage (paper P6c/P6d).
* ``affect`` probes: the 4-class label space of off-the-shelf SER models (happy / sad / angry /
  neutral), trained from delivery labels mapped to affect (``AFFECT_OF_DELIVERY``), from the clip
  alone as an SER model would. Two representations stand in for the paper's two SER systems:
  prosodic features and pooled log-mel. ``AffectPredictor`` passes the label on verbatim.

Training renders the training-split scenarios' reactions (every candidate option, both feedback
realizations) with the chosen renderer and delivery plan table (``prosody``); the held-out report
uses the test split. A checkpoint is one safetensors file: the weights, the feature
normalization, and the config and report as JSON metadata.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from rich.progress import track

from agents.classifier import NormalizedMLP, train_mlp
from hear_gym.envs.hear2act.audio import AFFECT_LABELS, user_turn_request
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.user.engine import UserEngine
from hear_gym.envs.hear2act.user.realizer import choose_delivery, realize
from hear_gym.envs.hear2act.user.states import REQUEST_DELIVERY, RESOLVED_DELIVERY_LABELS, Feedback
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.features import pooled_log_mel, prosodic_features
from hear_gym.speech.plans import DEFAULT_PROSODY, check_prosody
from hear_gym.speech.renderers import SAMPLE_RATE, make_renderer

CONCERN_CLASSES = ("resolved", "unresolved")
# How a generic speech-emotion model would file each delivery (valence x arousal), with no
# regard for the task: relieved is calm, hence neutral; concerned is a low, negative voice.
AFFECT_OF_DELIVERY = {
    "satisfied": "happy",
    "warm": "happy",
    "enthusiastic": "happy",
    "relieved": "neutral",
    "underwhelmed": "sad",
    "disappointed": "sad",
    "concerned": "sad",
    "lukewarm": "neutral",
    "flat": "neutral",
    "hesitant": "neutral",
    "neutral": "neutral",
    "frustrated": "angry",
    "impatient": "angry",
    "firm": "angry",
}
FEATURE_KINDS = ("prosody", "prosody_relative", "logmel")


@dataclass(frozen=True)
class ProbeConfig:
    task: str = "concern"  # "concern" | "affect"
    features: str = "prosody_relative"
    renderer: str = "espeak"
    prosody: str = DEFAULT_PROSODY  # the delivery plan table the training audio is rendered with
    hidden: int = 32
    epochs: int = 300
    learning_rate: float = 0.01
    seed: int = 0
    max_scenarios: int | None = None  # per split; None = all

    def __post_init__(self) -> None:
        if self.task not in ("concern", "affect"):
            raise ValueError(f"task must be 'concern' or 'affect', got {self.task!r}")
        if self.features not in FEATURE_KINDS:
            raise ValueError(f"features must be one of {FEATURE_KINDS}, got {self.features!r}")
        check_prosody(self.prosody)

    @property
    def classes(self) -> tuple[str, ...]:
        return CONCERN_CLASSES if self.task == "concern" else AFFECT_LABELS


def label_of(task: str, delivery: str) -> str:
    if task == "concern":
        return "resolved" if delivery in RESOLVED_DELIVERY_LABELS else "unresolved"
    return AFFECT_OF_DELIVERY[delivery]


def turn_features(kind: str, waveform: np.ndarray, reference: np.ndarray | None) -> np.ndarray:
    if kind == "logmel":
        return pooled_log_mel(waveform, SAMPLE_RATE)
    current = prosodic_features(waveform, SAMPLE_RATE)
    if kind == "prosody":
        return current.astype(np.float32)
    if reference is None:
        raise ValueError("prosody_relative features need the speaker's reference (request) audio")
    return np.concatenate([current, current - prosodic_features(reference, SAMPLE_RATE)])


@dataclass
class ProbeData:
    x: np.ndarray
    y: np.ndarray


def build_data(config: ProbeConfig, split: str, cache: RenderCache, seed: int) -> ProbeData:
    """Render every reaction of the split's scenarios (both feedbacks) and featurize it."""
    rng = np.random.default_rng(seed)
    scenarios = scenarios_for(split)[: config.max_scenarios]
    rows, labels = [], []
    for scenario in track(scenarios, description=f"{config.task} probe: {split} audio"):
        domain, speaker = domain_by_id(scenario.domain), scenario.scenario_id
        reference = cache.render(
            user_turn_request(speaker, scenario.request, REQUEST_DELIVERY, config.prosody)
        ).waveform
        for feedback in Feedback:
            engine = UserEngine(scenario, feedback)
            for cand in scenario.candidates:
                reaction = engine.react_to_recommendation(cand.option_id, frozenset())
                delivery = choose_delivery(reaction.state, rng)
                text = realize(reaction, scenario, domain, rng)
                wave = cache.render(user_turn_request(speaker, text, delivery, config.prosody)).waveform
                rows.append(turn_features(config.features, wave, reference))
                labels.append(config.classes.index(label_of(config.task, delivery)))
    return ProbeData(np.array(rows, dtype=np.float32), np.array(labels))


class AudioProbe(NormalizedMLP):
    """A trained probe (``config``: its ``ProbeConfig``): featurize a turn, normalize, classify."""

    def predict(self, waveform: np.ndarray, reference: np.ndarray | None = None) -> str:
        x = turn_features(self.config.features, waveform, reference)[None, :]
        return self.config.classes[int(self.predict_features(x)[0])]

    def save(self, path: Path) -> None:
        self.save_checkpoint(
            path, {"config": json.dumps(asdict(self.config)), "report": json.dumps(self.report)}
        )

    @classmethod
    def load(cls, path: str | Path) -> AudioProbe:
        meta = cls.checkpoint_metadata(path)
        if "config" not in meta:
            raise ValueError(f"{path} is not a hear_gym probe checkpoint (no config metadata)")
        # checkpoints from before plan tables existed were trained on what is now "clear"
        config = ProbeConfig(**{"prosody": "clear", **json.loads(meta["config"])})
        model, mean, std = cls.load_weights(path, config.hidden, len(config.classes))
        return cls(config, model, mean, std, json.loads(meta.get("report", "{}")))


def fit(config: ProbeConfig, train: ProbeData) -> AudioProbe:
    model, mean, std = train_mlp(
        train.x, train.y, len(config.classes), config.hidden, config.epochs, config.learning_rate, config.seed
    )
    return AudioProbe(config, model, mean, std)


def per_class_accuracy(probe: AudioProbe, data: ProbeData) -> dict[str, float]:
    return probe.class_report(data.x, data.y, probe.config.classes)


def train_probe(config: ProbeConfig, out: Path | None = None) -> AudioProbe:
    """Train on the train split, report held-out (test split) accuracy, optionally save."""
    cache = RenderCache(make_renderer(config.renderer), max_bytes=64 * 2**20)
    train = build_data(config, "train", cache, seed=config.seed)
    test = build_data(config, "test", cache, seed=config.seed + 1)
    probe = fit(config, train)
    probe.report = {"test": per_class_accuracy(probe, test), "train": per_class_accuracy(probe, train)}
    if out is not None:
        probe.save(out)
    return probe


def train_probe_from_options(out: Path, **options) -> AudioProbe:
    """``hear_gym.components:train_probe``: a ``ProbeConfig`` from options (``ValueError`` for bad
    ones, before any work), trained, saved to ``out``."""
    return train_probe(ProbeConfig(**options), out)


def concern_inferrer(path: str | Path) -> ConcernInferrer:
    """``hear_gym.components:state_inferrer``: the T+S^ inferrer of a concern-probe checkpoint."""
    return ConcernInferrer(AudioProbe.load(path))


def affect_classifier(path: str | Path) -> AffectPredictor:
    """``hear_gym.components:affect_classifier``: the T+SER classifier of an affect-probe checkpoint."""
    return AffectPredictor(AudioProbe.load(path))


class ConcernInferrer:
    """``StateInferrer`` for T+S^: one sentence about the current recommendation's status."""

    SENTENCES = {
        "resolved": "The user sounds genuinely satisfied; the recommendation seems resolved.",
        "unresolved": "The user sounds unconvinced; the recommendation seems unresolved.",
    }

    def __init__(self, probe: AudioProbe) -> None:
        if probe.config.task != "concern":
            raise ValueError("ConcernInferrer needs a concern probe")
        self.probe = probe

    def infer(
        self, waveform: np.ndarray, sample_rate: int, transcript: str, reference: np.ndarray | None = None
    ) -> str:
        if sample_rate != SAMPLE_RATE:
            raise ValueError(f"expected {SAMPLE_RATE} Hz audio, got {sample_rate}")
        return self.SENTENCES[self.probe.predict(waveform, reference)]


class AffectPredictor:
    """``AffectClassifier`` for T+SER: the probe's 4-class label, verbatim."""

    def __init__(self, probe: AudioProbe) -> None:
        if probe.config.task != "affect":
            raise ValueError("AffectPredictor needs an affect probe")
        self.probe = probe

    def classify(self, waveform: np.ndarray, sample_rate: int) -> str:
        if sample_rate != SAMPLE_RATE:
            raise ValueError(f"expected {SAMPLE_RATE} Hz audio, got {sample_rate}")
        return self.probe.predict(waveform)
