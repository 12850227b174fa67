"""A prosodic-feature classifier for the Ambiguity minimal pairs: which interpretation was said?

A listener who knows the language knows how each interpretation of a pair is said (a pause after
"eat", stress on "green", a rise at the end, tone 4 on 看): the item bank's ``SpokenReading`` of
each interpretation. What it does not know is which one it heard. This classifier hears the clip
and scores how well each candidate reading fits it, from Praat measurements (no token times: the
words are placed over the speech proportionally to their length, as a listener without a forced
aligner would):

* pause: the longest silence near each boundary where the candidate pauses;
* stress: F0 and energy of the candidate's stressed tokens against the utterance, and how near
  the utterance's F0 peak is to the start of the candidate's stressed token;
* contour: the final F0 slope, signed by the candidate's rise or fall;
* tone: how close each forced syllable's measured contour (start-to-end movement, level against
  the rest of the utterance) is to the candidate tone's Chao shape.

The feature vector is the difference between the two candidates' scores; a logistic regression
without intercept (swapping the candidates flips the sign of the features and of the answer) is
trained on the train split's items and evaluated on held-out items (``evaluate``: accuracy per
contrast class with 95% item-bootstrap CIs). ``ProsodicClassifierAgent`` plays it in the env
under ``A+T`` or ``A`` (the clip; it finds the pair by its options); ``prosodic_agent.py``
registers it, fitted on the train split, as the ``prosodic`` agent of ``hear-gym eval``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hear_gym.envs.ambiguity import cues
from hear_gym.envs.ambiguity.items.generator import all_items
from hear_gym.envs.ambiguity.items.model import AUDIO_DECIDED, PhonologicalPair
from hear_gym.envs.ambiguity.spoken import SpokenReading

if TYPE_CHECKING:  # scikit-learn is a dev extra: imported where the classifier is fitted
    from sklearn.linear_model import LogisticRegression

FEATURES: tuple[str, ...] = (
    "pause_silence_s",
    "stress_f0_st",
    "stress_energy_db",
    "stress_peak",
    "contour_slope",
    "tone_fit",
)
SEARCH_S = 0.3  # how far from a boundary's proportional time a pause is looked for
# Chao shapes (start-to-end movement, mean level against the context), semitones: the tone
# targets a listener expects (2.5 semitones per Chao level)
TONE_TARGETS = {1: (0.0, 5.0), 2: (5.0, 2.5), 3: (-2.5, -3.75), 4: (-10.0, 0.0)}


def _speech_span(t: cues.Track) -> tuple[float, float]:
    loud = t.db > t.db.max() - cues.SILENCE_BELOW_PEAK_DB
    times = t.db_times[loud]
    return float(times[0]), float(times[-1]) + cues.FRAME_S


def _f0_peak_time(t: cues.Track) -> float:
    """When the F0 track (smoothed over 5 voiced frames) is highest; NaN when too little is
    voiced."""
    voiced = ~np.isnan(t.f0_st)
    times, st = t.f0_times[voiced], t.f0_st[voiced]
    if len(times) < 5:
        return float("nan")
    smooth = np.convolve(st, np.ones(5) / 5, mode="valid")
    return float(times[2 + int(np.argmax(smooth))])


def proportional_spans(reading: SpokenReading, t: cues.Track) -> list[tuple[float, float]]:
    """Token times guessed from the speech span, each token as long as its letters (English) or
    one syllable (Mandarin)."""
    start, end = _speech_span(t)
    weights = np.array([len(tok) + 1 if reading.language == "en" else 1 for tok in reading.tokens], float)
    edges = start + (end - start) * np.concatenate([[0], np.cumsum(weights) / weights.sum()])
    return [(float(a), float(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def candidate_scores(reading: SpokenReading, t: cues.Track) -> np.ndarray:
    """How well the clip fits ``reading``, per feature (0 where the reading has no such mark)."""
    spans = proportional_spans(reading, t)
    pause = [
        cues.silence_between(
            t, (spans[i][1] - SEARCH_S, spans[i][1]), (spans[i + 1][0], spans[i + 1][0] + SEARCH_S)
        )
        for i in reading.pause_after
    ]
    median_st = t.median_st
    loud_db = float(np.mean(t.db[t.db > t.db.max() - cues.SILENCE_BELOW_PEAK_DB]))
    stressed = [cues.token_prosody(t, spans[i]) for i in reading.stress]
    f0 = [p.f0_mean_st - median_st for p in stressed if not np.isnan(p.f0_mean_st)]
    energy = [p.energy_db - loud_db for p in stressed if not np.isnan(p.energy_db)]
    peak = _f0_peak_time(t)
    speech = _speech_span(t)
    near_peak = [
        -abs(peak - spans[i][0]) / (speech[1] - speech[0]) for i in reading.stress if not np.isnan(peak)
    ]
    slope = cues.final_slope(t) * (1 if reading.contour == "rise" else -1)
    fits = []
    if reading.language == "zh":
        for i, form in reading.pronounce:
            target = TONE_TARGETS.get(int(form[-1]))
            token = cues.token_prosody(t, spans[i])
            if target is None or np.isnan(token.f0_mean_st):
                continue
            movement = token.f0_end_st - token.f0_start_st
            level = token.f0_mean_st - cues.context_median_st(t, spans[i])
            fits.append(-(abs(movement - target[0]) + abs(level - target[1])) / 5.0)
    return np.array(
        [
            np.mean(pause) if pause else 0.0,
            np.mean(f0) if f0 else 0.0,
            np.mean(energy) if energy else 0.0,
            10 * np.mean(near_peak) if near_peak else 0.0,
            slope / 10.0,
            np.sum(fits) if fits else 0.0,
        ]
    )


def pair_features(waveform: np.ndarray, candidates: tuple[SpokenReading, SpokenReading]) -> np.ndarray:
    """Candidate 0's fit minus candidate 1's: positive favours candidate 0."""
    t = cues.track(waveform)
    return candidate_scores(candidates[0], t) - candidate_scores(candidates[1], t)


@dataclass
class ProsodicClassifier:
    model: LogisticRegression | None = None

    def fit(self, rows: np.ndarray, said_first: np.ndarray) -> ProsodicClassifier:
        from sklearn.linear_model import LogisticRegression

        # both orders of every example: the rule cannot prefer a candidate for its position
        x = np.concatenate([rows, -rows])
        y = np.concatenate([said_first, 1 - said_first])
        self.model = LogisticRegression(fit_intercept=False, C=1.0, max_iter=1000).fit(x, y)
        return self

    def prob_first(self, rows: np.ndarray) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("fit the classifier first")
        return self.model.predict_proba(np.atleast_2d(rows))[:, 1]


# -- data from the suite --------------------------------------------------------------------------
def suite_pairs(*splits: str) -> list[PhonologicalPair]:
    """The audio-decided minimal pairs of these splits."""
    return [
        item
        for item in all_items()
        if isinstance(item, PhonologicalPair) and item.contrast in AUDIO_DECIDED and item.split in splits
    ]


@dataclass(frozen=True)
class Example:
    item_id: str
    contrast: str
    said: int  # which reading was rendered
    features: np.ndarray


def examples(pairs: list[PhonologicalPair], voices: tuple[str, ...], renderer: str) -> list[Example]:
    from hear_gym.envs.ambiguity.render import render_reading

    out = []
    for item in pairs:
        candidates = tuple(u.spoken for u in item.readings)
        for voice in voices:
            for said, reading in enumerate(candidates):
                waveform = render_reading(reading, voice, renderer)
                out.append(
                    Example(item.item_id, item.contrast.value, said, pair_features(waveform, candidates))
                )
    return out


def item_bootstrap_ci(
    correct_by_item: dict[str, list[bool]], seed: int = 0, draws: int = 2000
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    items = list(correct_by_item)
    means = []
    for _ in range(draws):
        picked = rng.choice(len(items), size=len(items), replace=True)
        means.append(np.mean([c for i in picked for c in correct_by_item[items[i]]]))
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def evaluate(
    voices: tuple[str, ...] = ("m3", "f2"),
    renderer: str = "espeak",
    held_out_splits: tuple[str, ...] = ("dev", "test"),
) -> dict:
    """Train on the train split's pairs, evaluate on the held-out splits' pairs: accuracy per
    contrast class (and overall) with 95% item-bootstrap CIs."""
    train = examples(suite_pairs("train"), voices, renderer)
    held_out = examples(suite_pairs(*held_out_splits), voices, renderer)
    classifier = ProsodicClassifier().fit(
        np.stack([e.features for e in train]), np.array([1 - e.said for e in train])
    )
    guesses = classifier.prob_first(np.stack([e.features for e in held_out])) < 0.5  # True: second
    by_class: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for example, second in zip(held_out, guesses, strict=True):
        correct = int(second) == example.said
        by_class[example.contrast][example.item_id].append(correct)
        by_class["all"][example.item_id].append(correct)
    report = {}
    for contrast, by_item in sorted(by_class.items()):
        values = [c for v in by_item.values() for c in v]
        report[contrast] = {
            "n": len(values),
            "items": len(by_item),
            "accuracy": float(np.mean(values)),
            "ci95": list(item_bootstrap_ci(by_item)),
        }
    return {
        "renderer": renderer,
        "voices": list(voices),
        "weights": dict(zip(FEATURES, classifier.model.coef_[0].round(3).tolist(), strict=True)),
        "accuracy": report,
    }


# -- the agent --------------------------------------------------------------------------------------
class ProsodicClassifierAgent:
    """Answers a phonological minimal pair from the clip's prosody (other questions: the first
    option). Finds the pair by the options in the question (they name its interpretations)."""

    required_access = ("A+T", "A")

    def __init__(self, classifier: ProsodicClassifier) -> None:
        self.classifier = classifier
        self._pairs = [item for item in all_items() if isinstance(item, PhonologicalPair)]

    def reset(self, seed: int | None = None) -> None:
        """Stateless between episodes."""

    def act(self, observation: dict) -> int:
        question = observation["question"]
        matches = [p for p in self._pairs if all(option in question for option in p.interpretations)]
        if len(matches) != 1 or "audio" not in observation:
            return 0
        pair = matches[0]
        audio = np.asarray(observation["audio"], dtype=np.float32)
        if "audio_length" in observation:
            audio = audio[: int(np.asarray(observation["audio_length"]).ravel()[0])]
        candidates = tuple(u.spoken for u in pair.readings)
        first = self.classifier.prob_first(pair_features(audio, candidates))[0] >= 0.5
        chosen = pair.interpretations[0 if first else 1]
        return _option_index(question, chosen)


def _option_index(question: str, interpretation: str) -> int:
    """The index of the option line showing ``interpretation`` (lines ``A) ...``)."""
    options = [
        line.split(") ", 1)[1] for line in question.splitlines() if len(line) > 3 and line[1:3] == ") "
    ]
    return options.index(interpretation) if interpretation in options else 0
