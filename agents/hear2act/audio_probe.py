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

A concern probe can be given an operating point (``max_false_resolved``): it then says
"resolved" only above the log-odds of resolved at which at most that share of the dev split's
reluctant acceptances would (prosody-mediated shared assents, the one decision the words leave
open). A listener that confirms on "resolved" trades missed genuine acceptances (a turn each) for
false ones (the gold, each); how many of each pays depends on the turn cost. Nothing else in the
project selects on the dev split. ``assents_only`` trains a concern probe on those shared assents
alone (``ASSENT_DRAWS`` realizations each), the decision such a listener makes, instead of on
every reaction.
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
from hear_gym.envs.hear2act.user.engine import ReactionKind, UserEngine
from hear_gym.envs.hear2act.user.realizer import choose_delivery, realize
from hear_gym.envs.hear2act.user.states import REQUEST_DELIVERY, RESOLVED_DELIVERY_LABELS, Feedback
from hear_gym.speech.cache import Heard, RenderCache
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
# ``whole_turn_relative``: prosody and pooled log-mel of the turn, each also minus the same
# speaker's opening request (the whole turn, speaker-normalized)
FEATURE_KINDS = ("prosody", "prosody_relative", "logmel", "whole_turn_relative")
RESOLVED, UNRESOLVED = CONCERN_CLASSES.index("resolved"), CONCERN_CLASSES.index("unresolved")
CALIBRATION_SPLIT = "dev"
CALIBRATION_REPORT = "dev assents"  # a calibrated probe's figures at its operating point there
ASSENT_DRAWS = 3  # realizations of each assent when calibrating and reporting: ~1,150 reluctant ones


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
    # concern probes: the operating point, calibrated on the dev split's reluctant acceptances
    # (None: the more likely class)
    max_false_resolved: float | None = None
    assents_only: bool = False  # concern probes: learn from the prosody shared assents alone

    def __post_init__(self) -> None:
        if self.task not in ("concern", "affect"):
            raise ValueError(f"task must be 'concern' or 'affect', got {self.task!r}")
        if self.max_false_resolved is not None:
            if self.task != "concern":
                raise ValueError("max_false_resolved sets a concern probe's operating point")
            if not 0.0 <= self.max_false_resolved < 1.0:
                raise ValueError(f"max_false_resolved must be in [0, 1), got {self.max_false_resolved}")
        if self.assents_only and self.task != "concern":
            raise ValueError("assents_only trains a concern probe (affect probes hear every reaction)")
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
        raise ValueError(f"{kind} features need the speaker's reference (request) audio")
    relative = np.concatenate([current, current - prosodic_features(reference, SAMPLE_RATE)])
    if kind == "prosody_relative":
        return relative
    mel = pooled_log_mel(waveform, SAMPLE_RATE)
    return np.concatenate([relative, mel, mel - pooled_log_mel(reference, SAMPLE_RATE)]).astype(np.float32)


def heard_features(kind: str, turn: Heard, reference: Heard | None) -> np.ndarray:
    """``turn_features`` of rendered turns, read by utterance (the same values)."""
    if kind == "logmel":
        return turn.pooled_log_mel()
    current = turn.prosodic_features()
    if kind == "prosody":
        return current.astype(np.float32)
    if reference is None:
        raise ValueError(f"{kind} features need the speaker's reference (request) audio")
    relative = np.concatenate([current, current - reference.prosodic_features()])
    if kind == "prosody_relative":
        return relative
    mel = turn.pooled_log_mel()
    return np.concatenate([relative, mel, mel - reference.pooled_log_mel()]).astype(np.float32)


@dataclass
class ProbeData:
    x: np.ndarray
    y: np.ndarray
    item_ids: np.ndarray  # each row's scenario: the unit a scenario bootstrap resamples
    deliveries: np.ndarray | None = None  # each row's delivery label, where error analyses need it


def build_data(
    config: ProbeConfig, split: str, cache: RenderCache, seed: int, assents: bool = False
) -> ProbeData:
    """Render every reaction of the split's scenarios (both feedbacks) and featurize it; with
    ``assents``, only the prosody-mediated shared assents, ``ASSENT_DRAWS`` realizations each."""
    rng = np.random.default_rng(seed)
    scenarios = scenarios_for(split)[: config.max_scenarios]
    feedbacks, draws = ((Feedback.PROSODY,), ASSENT_DRAWS) if assents else (tuple(Feedback), 1)
    rows, labels, item_ids, deliveries = [], [], [], []
    what = "assents" if assents else "audio"
    for scenario in track(scenarios, description=f"{config.task} probe: {split} {what}"):
        domain, speaker = domain_by_id(scenario.domain), scenario.scenario_id
        reference = cache.render(
            user_turn_request(speaker, scenario.request, REQUEST_DELIVERY, config.prosody)
        ).waveform
        for feedback in feedbacks:
            engine = UserEngine(scenario, feedback)
            for cand in scenario.candidates:
                reaction = engine.react_to_recommendation(cand.option_id, frozenset())
                if assents and reaction.kind is not ReactionKind.SHARED_ASSENT:
                    continue
                for _ in range(draws):
                    delivery = choose_delivery(reaction.state, rng)
                    text = realize(reaction, scenario, domain, rng)
                    wave = cache.render(user_turn_request(speaker, text, delivery, config.prosody)).waveform
                    rows.append(turn_features(config.features, wave, reference))
                    labels.append(config.classes.index(label_of(config.task, delivery)))
                    item_ids.append(speaker)
                    deliveries.append(delivery)
    return ProbeData(
        np.array(rows, dtype=np.float32),
        np.array(labels, dtype=np.int64),
        np.array(item_ids),
        np.array(deliveries),
    )


class AudioProbe(NormalizedMLP):
    """A trained probe (``config``: its ``ProbeConfig``): featurize a turn, normalize, classify.
    A calibrated concern probe (``threshold``) says resolved only above those log-odds."""

    threshold: float | None = None
    KEPT_VERDICTS = 65_536  # one per distinct feature row heard; a few hundred bytes each

    def predict(self, waveform: np.ndarray, reference: np.ndarray | None = None) -> str:
        """The class of one turn. Verdicts are kept by feature row: every condition of a grid that
        hears a turn gets its verdict without another forward pass (the same row gives the same
        logits; the operating point is part of the key)."""
        return self._verdict(turn_features(self.config.features, waveform, reference)[None, :])

    def predict_heard(self, turn: Heard, reference: Heard | None = None) -> str:
        """``predict`` of a rendered turn (``hear_gym.speech.cache.Heard``): the same features,
        looked up by the utterance, so no audio is read where they are stored."""
        return self._verdict(heard_features(self.config.features, turn, reference)[None, :])

    def _verdict(self, x: np.ndarray) -> str:
        verdicts = self.__dict__.setdefault("_verdicts", {})
        key = (self.threshold, x.tobytes())
        verdict = verdicts.get(key)
        if verdict is None:
            if len(verdicts) >= self.KEPT_VERDICTS:
                verdicts.clear()
            verdict = verdicts[key] = self.config.classes[int(self.predict_features(x)[0])]
        return verdict

    def predict_features(self, x: np.ndarray) -> np.ndarray:
        if self.threshold is None:
            return super().predict_features(x)
        return np.where(self.resolved_log_odds(x) > self.threshold, RESOLVED, UNRESOLVED)

    def resolved_log_odds(self, x: np.ndarray) -> np.ndarray:
        """log p(resolved) - log p(unresolved) per row (logits, so a confident probe's scores
        stay apart where its probabilities would round to 1)."""
        logits = self.logits(x)
        return (logits[:, RESOLVED] - logits[:, UNRESOLVED]).numpy()

    def save(self, path: Path) -> None:
        metadata = {"config": json.dumps(asdict(self.config)), "report": json.dumps(self.report)}
        if self.threshold is not None:
            metadata["threshold"] = repr(self.threshold)
        self.save_checkpoint(path, metadata)

    @classmethod
    def load(cls, path: str | Path) -> AudioProbe:
        meta = cls.checkpoint_metadata(path)
        if "config" not in meta:
            raise ValueError(f"{path} is not a hear_gym probe checkpoint (no config metadata)")
        # checkpoints from before plan tables existed were trained on what is now "clear"
        config = ProbeConfig(**{"prosody": "clear", **json.loads(meta["config"])})
        model, mean, std = cls.load_weights(path, config.hidden, len(config.classes))
        probe = cls(config, model, mean, std, json.loads(meta.get("report", "{}")))
        if config.max_false_resolved is not None:
            if "threshold" not in meta:
                raise ValueError(f"{path}: a calibrated concern probe without its threshold")
            probe.threshold = float(meta["threshold"])
        return probe


def fit(config: ProbeConfig, train: ProbeData) -> AudioProbe:
    model, mean, std = train_mlp(
        train.x, train.y, len(config.classes), config.hidden, config.epochs, config.learning_rate, config.seed
    )
    return AudioProbe(config, model, mean, std)


def per_class_accuracy(probe: AudioProbe, data: ProbeData) -> dict[str, float]:
    return probe.class_report(data.x, data.y, probe.config.classes)


def calibrate(probe: AudioProbe, dev: ProbeData) -> float:
    """The log-odds of resolved above which at most ``max_false_resolved`` of ``dev``'s
    unresolved rows read resolved."""
    scores = np.sort(probe.resolved_log_odds(dev.x[dev.y == UNRESOLVED]))[::-1]
    if not len(scores):
        raise ValueError("no reluctant acceptances to calibrate on")
    return float(scores[int(np.floor(probe.config.max_false_resolved * len(scores)))])


def train_probe(config: ProbeConfig, out: Path | None = None) -> AudioProbe:
    """Train on the train split, calibrate a concern probe's operating point on the dev split if
    asked, report held-out (test split) accuracy, optionally save. Concern probes also report the
    test split's shared assents (``test assents``): resolved = genuine ones heard, unresolved =
    reluctant ones not taken for genuine; calibrated ones the same on the calibration split's
    (``CALIBRATION_REPORT``), the rates a listener may weigh the probe's verdicts by."""
    cache = RenderCache(make_renderer(config.renderer), max_bytes=64 * 2**20)
    train = build_data(config, "train", cache, seed=config.seed, assents=config.assents_only)
    test = build_data(config, "test", cache, seed=config.seed + 1)
    probe = fit(config, train)
    if config.max_false_resolved is not None:
        dev = build_data(config, CALIBRATION_SPLIT, cache, seed=config.seed + 2, assents=True)
        probe.threshold = calibrate(probe, dev)
    probe.report = {"test": per_class_accuracy(probe, test), "train": per_class_accuracy(probe, train)}
    if config.max_false_resolved is not None:
        probe.report[CALIBRATION_REPORT] = per_class_accuracy(probe, dev)
    if config.task == "concern":
        assents = build_data(config, "test", cache, seed=config.seed + 3, assents=True)
        probe.report["test assents"] = per_class_accuracy(probe, assents)
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


def channel_rates(probe: AudioProbe) -> tuple[float, float]:
    """(recall, false_resolved) of the probe's verdict on the calibration split's shared
    assents, from its report."""
    figures = probe.report.get(CALIBRATION_REPORT)
    if figures is None:
        raise ValueError(
            f"a concern probe without {CALIBRATION_REPORT!r} figures in its report: train it with an "
            "operating point (hear-gym train probe --max-false-resolved ...) for the planner to weigh it"
        )
    return figures["resolved"], 1.0 - figures["unresolved"]


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

    def verdict_rates(self) -> tuple[float, float]:
        """(recall, false_resolved) of its verdicts: the probe's ``channel_rates``."""
        return channel_rates(self.probe)

    def infer(
        self, waveform: np.ndarray, sample_rate: int, transcript: str, reference: np.ndarray | None = None
    ) -> str:
        if sample_rate != SAMPLE_RATE:
            raise ValueError(f"expected {SAMPLE_RATE} Hz audio, got {sample_rate}")
        return self.SENTENCES[self.probe.predict(waveform, reference)]

    def infer_heard(self, turn: Heard, transcript: str, reference: Heard | None = None) -> str:
        """``infer`` of rendered turns, their features read by utterance."""
        return self.SENTENCES[self.probe.predict_heard(turn, reference)]


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

    def classify_heard(self, turn: Heard) -> str:
        """``classify`` of a rendered turn, its features read by utterance."""
        return self.probe.predict_heard(turn)
