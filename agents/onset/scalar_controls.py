"""Every single-scalar control of the Onset listener: one number, read three ways.

A control is one of 25 columns of a prefix (the five scalar acoustics, its leading silence, the
12 prosodic features of the representation but its duration, already a scalar acoustic, and the
8 scalars of its last 300 ms) read ``linear`` (the
paper's probe on that column alone), ``piecewise`` (as the listener reads each of its columns,
``agents.onset.piecewise``) or by a ``tree`` (any set of intervals: a balanced decision tree with
at least ``TREE_LEAF`` training rows a leaf; needs scikit-learn). ``listener_margins`` scores
each on post-onset accuracy against a listener: the control and the listener minus it, with
paired contrast-group bootstrap intervals (``hear_gym.envs.onset.metrics``).
"""

from __future__ import annotations

import numpy as np

from agents.onset.piecewise import PiecewiseReading
from agents.onset.probes import PrefixRow, Probe, row_blocks, trajectory_records
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES
from hear_gym.envs.onset.features import SCALAR_NAMES
from hear_gym.envs.onset.metrics import metric_table, paired_difference
from hear_gym.speech.features import FEATURE_NAMES

READINGS = ("linear", "piecewise", "tree")
TREE_LEAF = 30
SILENCE_DBFS = -40.0
COLUMNS: tuple[tuple[str, str, int], ...] = (  # (name, block, index)
    *((n, "scalar", i) for i, n in enumerate(SCALAR_NAMES)),
    ("leading_silence", "silence", 0),
    *((n, "representation", i) for i, n in enumerate(FEATURE_NAMES) if n not in SCALAR_NAMES),
    *((n, "tail", i) for i, n in enumerate(TAIL_SCALAR_NAMES)),
)


def leading_silence(wave: np.ndarray) -> float:
    """Seconds before the first 10 ms frame louder than ``SILENCE_DBFS``."""
    frames = wave[: len(wave) // 160 * 160].reshape(-1, 160).astype(np.float64)
    loud = np.flatnonzero(10 * np.log10(np.mean(frames**2, axis=1) + 1e-12) > SILENCE_DBFS)
    return float(loud[0] * 0.01) if len(loud) else len(wave) / 16_000


def control_blocks(rows: list[PrefixRow]) -> dict:
    """The blocks every control and the listener read (representation, tail, scalar, silence)."""
    blocks = row_blocks(rows, ("representation", "tail", "scalar"))
    blocks["silence"] = np.array([[leading_silence(r.waveform())] for r in rows])
    return blocks


def _column(blocks: dict, block: str, index: int) -> np.ndarray:
    return np.asarray(blocks[block], dtype=np.float64)[:, [index]]


def control_predictions(
    train: list[PrefixRow], train_blocks: dict, test_blocks: dict
) -> dict[str, list[str]]:
    """``"READING:NAME"``: the test predictions of every control, fit on ``train``."""
    from sklearn.tree import DecisionTreeClassifier

    labels = [r.target for r in train]
    out = {}
    for name, block, index in COLUMNS:
        x_train, x_test = _column(train_blocks, block, index), _column(test_blocks, block, index)
        linear = Probe("scalar").fit(train, {"scalar": x_train})
        out[f"linear:{name}"] = linear.predict({"scalar": x_test})
        reading = PiecewiseReading().fit(x_train)
        piecewise = Probe("scalar").fit(train, {"scalar": reading.transform(x_train)})
        out[f"piecewise:{name}"] = piecewise.predict({"scalar": reading.transform(x_test)})
        tree = DecisionTreeClassifier(min_samples_leaf=TREE_LEAF, class_weight="balanced", random_state=0)
        out[f"tree:{name}"] = list(tree.fit(x_train, labels).predict(x_test))
    return out


def listener_margins(
    test: list[PrefixRow], listener: list[str], controls: dict[str, list[str]]
) -> dict[str, dict]:
    """Per control: its post-onset accuracy and the listener's paired margin over it (``Estimate``s)."""
    listener_records = trajectory_records(test, listener)
    out = {}
    for name, predictions in controls.items():
        records = trajectory_records(test, predictions)
        out[name] = {
            "control": metric_table(records)["all"]["post_onset_accuracy"],
            "margin": paired_difference(listener_records, records, "post_onset_accuracy"),
        }
    return out
