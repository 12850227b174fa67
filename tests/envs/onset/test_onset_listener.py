"""The probe that defines "listening" on Onset is not beaten by one number.

The reference listener (``Probe("audio")``: the 12 prosodic features of the prefix and the 8
scalars of its last 300 ms, each read piecewise-linearly) must beat every single-scalar control
(``agents.onset.scalar_controls``: each of 25 columns read linearly, piecewise-linearly and by a
decision tree) on held-out post-onset accuracy, with the paired group-bootstrap interval of its
margin above zero. The earlier probe, linear on the 140-value representation, fails the same
check: the tail's F0 mean read by a tree (41.0%) sits level with it (41.8%; margin +0.7
[-5.2, +7.0] on eSpeak). One weight per column gives each action at most one interval of it,
while an action's pitch level recurs along the scale (a step from each voice's own pitch).

The default tier checks the mechanism on synthetic levels; the full-size comparison (2,080
training and 1,600 test prefixes, about 5 minutes of Praat on eSpeak) is ``slow``.
"""

from functools import cache

import numpy as np
import pytest

from agents.onset.piecewise import PiecewiseReading
from agents.onset.probes import PrefixRow, Probe, prefix_rows
from agents.onset.scalar_controls import READINGS, control_blocks, control_predictions, listener_margins

pytest.importorskip("sklearn")  # the tree controls


def _levels(n: int, seed: int):
    """One column of four levels, two classes alternating along it (as an action's pitch recurs
    a step above each voice's own): a linear reading gives each class one interval."""
    rng = np.random.default_rng(seed)
    level = rng.integers(0, 4, n)
    x = level + rng.normal(0, 0.15, n)
    return x[:, None], [("a", "b")[k % 2] for k in level]


def test_a_piecewise_reading_tells_recurring_levels_apart_and_a_linear_one_cannot():
    x_train, y_train = _levels(600, 0)
    x_test, y_test = _levels(600, 1)
    rows = [PrefixRow("g", "a", "clean", 0, y, "") for y in y_train]

    def accuracy(train_x, test_x):
        predictions = Probe("scalar").fit(rows, {"scalar": train_x}).predict({"scalar": test_x})
        return np.mean(np.array(predictions) == np.array(y_test))

    reading = PiecewiseReading().fit(x_train)
    assert accuracy(reading.transform(x_train), reading.transform(x_test)) > 0.95
    assert accuracy(x_train, x_test) < 0.8  # one interval a class: three levels of four at best


def test_a_piecewise_reading_rejects_too_few_knots_and_other_columns():
    with pytest.raises(ValueError, match="knots"):
        PiecewiseReading(knots=1)
    with pytest.raises(ValueError, match="columns"):
        PiecewiseReading().fit(np.zeros((4, 2))).transform(np.zeros((4, 3)))


@cache
def _data(renderer: str):
    train, test = prefix_rows("train", renderer=renderer), prefix_rows("test", renderer=renderer)
    train_blocks, test_blocks = control_blocks(train), control_blocks(test)
    controls = control_predictions(train, train_blocks, test_blocks)
    return train, test, train_blocks, test_blocks, controls


def _worst(margins: dict) -> tuple[str, float]:
    name = min(margins, key=lambda n: margins[n]["margin"].low)
    return name, margins[name]["margin"].low


@pytest.mark.slow
def test_the_listener_beats_every_scalar_control(renderer):
    train, test, train_blocks, test_blocks, controls = _data(renderer)
    assert len(controls) == 25 * len(READINGS)
    listener = Probe("audio").fit(train, train_blocks).predict(test_blocks)
    name, low = _worst(listener_margins(test, listener, controls))
    assert low > 0, (renderer, name, low)


@pytest.mark.slow
def test_the_linear_probe_on_the_representation_does_not(renderer):
    """The leaky variant: the probe as it was, one weight per value of the representation."""
    train, test, train_blocks, test_blocks, controls = _data(renderer)
    linear = Probe("scalar").fit(train, {"scalar": train_blocks["representation"]})
    predictions = linear.predict({"scalar": test_blocks["representation"]})
    name, low = _worst(listener_margins(test, predictions, controls))
    assert low <= 0, (renderer, name, low)
