"""Acoustic shortcut audit: can one acoustic scalar tell two delivery classes apart?

A listening task is only as hard as its easiest cue. ``acoustic_scalars`` measures every scalar
a shortcut could use on one utterance: the prosodic features (``FEATURE_NAMES``) plus speech
RMS, peak, frame-intensity maximum, clip duration (lead silence included) and F0 median; each
absolute and relative to a reference utterance by the same speaker (their earlier turn), since
a listener compares with what they already heard. ``ThresholdRule`` is the best single-scalar
classifier: a threshold and a direction fit on training items to maximize balanced accuracy.
Family-agnostic; numpy and Praat only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hear_gym.speech.features import FEATURE_NAMES, PITCH_CEILING_HZ, PITCH_FLOOR_HZ, prosodic_features

EXTRA_NAMES = ("speech_rms_db", "peak_db", "intensity_max_db", "clip_duration_s", "f0_median_st")
BASE_NAMES: tuple[str, ...] = (*FEATURE_NAMES, *EXTRA_NAMES)
SCALAR_NAMES: tuple[str, ...] = (*BASE_NAMES, *(f"{name} (rel)" for name in BASE_NAMES))
_SILENT = 1e-4  # below this the renderers' output is digital silence (pauses)
_FRAME, _HOP = 400, 160  # 25 ms frames, 10 ms hop at 16 kHz


def _db(x: float) -> float:
    return float(20 * np.log10(max(x, 1e-10)))


def _extra(waveform: np.ndarray, sample_rate: int) -> list[float]:
    """``EXTRA_NAMES``; speech is the span from the first to the last non-silent sample."""
    import parselmouth

    w = np.asarray(waveform, dtype=np.float64)
    loud = np.flatnonzero(np.abs(w) > _SILENT)
    speech = w[loud[0] : loud[-1] + 1] if len(loud) else np.zeros(_FRAME)
    frames = np.lib.stride_tricks.sliding_window_view(
        np.pad(speech, (0, max(0, _FRAME - len(speech)))), _FRAME
    )[::_HOP]
    pitch = parselmouth.Sound(w, sampling_frequency=sample_rate).to_pitch(
        time_step=0.01, pitch_floor=PITCH_FLOOR_HZ, pitch_ceiling=PITCH_CEILING_HZ
    )
    f0 = pitch.selected_array["frequency"]
    voiced = f0[f0 > 0]
    return [
        _db(float(np.sqrt(np.mean(speech**2)))),
        _db(float(np.abs(w).max(initial=0.0))),
        _db(float(np.sqrt((frames**2).mean(axis=1)).max())),
        len(w) / sample_rate,
        float(np.median(12 * np.log2(voiced / 100.0))) if len(voiced) else 0.0,
    ]


def base_scalars(waveform: np.ndarray, sample_rate: int = 16_000) -> np.ndarray:
    """``BASE_NAMES`` of one utterance."""
    features = prosodic_features(waveform, sample_rate)
    return np.concatenate([features, _extra(waveform, sample_rate)]).astype(np.float64)


def acoustic_scalars(waveform: np.ndarray, reference: np.ndarray, sample_rate: int = 16_000) -> np.ndarray:
    """``SCALAR_NAMES``: the utterance's scalars, then the same minus the reference's."""
    current = base_scalars(waveform, sample_rate)
    return np.concatenate([current, current - base_scalars(reference, sample_rate)])


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    y_true, y_pred = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    return float(((y_pred[y_true]).mean() + (~y_pred[~y_true]).mean()) / 2)


@dataclass(frozen=True)
class ThresholdRule:
    """Predicts the positive class when ``direction * x > direction * threshold``."""

    threshold: float
    direction: int

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray) -> ThresholdRule:
        """The threshold and direction with the best balanced accuracy on (x, y): every cut
        between two distinct sorted values, both directions."""
        x, y = np.asarray(x, float), np.asarray(y, bool)
        order = np.argsort(x, kind="stable")
        xs, ys = x[order], y[order]
        # predicting positive above cut k (items k.. positive): recall of each class
        pos_above = np.concatenate([[ys.sum()], ys.sum() - np.cumsum(ys)])
        neg_below = np.concatenate([[0], np.cumsum(~ys)])
        score = (pos_above / max(ys.sum(), 1) + neg_below / max((~ys).sum(), 1)) / 2
        valid = np.concatenate([[True], xs[1:] > xs[:-1], [True]])  # cuts between distinct values
        score = np.where(valid, score, -1.0)
        up, down = int(np.argmax(score)), int(np.argmax(np.where(valid, 1 - score, -1.0)))
        direction, k = (1, up) if score[up] >= 1 - score[down] else (-1, down)
        edges = np.concatenate([[xs[0] - 1.0], (xs[:-1] + xs[1:]) / 2, [xs[-1] + 1.0]])
        return cls(float(edges[k]), direction)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.direction * np.asarray(x, float) > self.direction * self.threshold


def best_single_scalar(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    names: tuple[str, ...] = SCALAR_NAMES,
) -> list[dict]:
    """Per scalar: the rule fit on train and its balanced accuracy on train and test, sorted by
    test accuracy (best first)."""
    rows = []
    for j, name in enumerate(names):
        rule = ThresholdRule.fit(x_train[:, j], y_train)
        rows.append(
            {
                "scalar": name,
                "threshold": rule.threshold,
                "direction": rule.direction,
                "train": balanced_accuracy(y_train, rule.predict(x_train[:, j])),
                "test": balanced_accuracy(y_test, rule.predict(x_test[:, j])),
                "predicted": rule.predict(x_test[:, j]),
            }
        )
    return sorted(rows, key=lambda r: -r["test"])
