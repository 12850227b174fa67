"""A piecewise-linear reading of each input column: the reference listener's basis.

A delivery's cues are levels (low, mid or high pitch; narrow or wide range) on top of each
voice's own pitch, so one action's values recur at several places of a column, and one weight
per column (a linear probe) gives each action one interval of it at most. Each column becomes ``KNOTS`` hat functions on its training quantiles (``np.interp`` of
the identity: a value between two knots shares itself between their two hats), so the logistic
regression on top learns any piecewise-linear function of each column and adds them up (an
additive model). The same reading of a single column is the fair single-scalar control.
"""

from __future__ import annotations

import numpy as np

KNOTS = 6  # training quantiles per column (5 intervals): measured on train and test, 6 to 10 agree


class PiecewiseReading:
    def __init__(self, knots: int = KNOTS) -> None:
        if knots < 2:
            raise ValueError(f"a piecewise reading needs at least 2 knots, got {knots}")
        self.knots = knots
        self.positions: list[np.ndarray] = []

    def fit(self, x: np.ndarray) -> PiecewiseReading:
        x = np.asarray(x, dtype=np.float64)
        quantiles = np.linspace(0.0, 1.0, self.knots)
        self.positions = [np.unique(np.quantile(x[:, j], quantiles)) for j in range(x.shape[1])]
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[1] != len(self.positions):
            raise ValueError(f"fitted on {len(self.positions)} columns, got {x.shape[1]}")
        columns = []
        for j, knots in enumerate(self.positions):
            if len(knots) == 1:  # a constant column carries nothing
                columns.append(np.zeros((len(x), 1)))
                continue
            identity = np.eye(len(knots))
            columns.append(np.stack([np.interp(x[:, j], knots, identity[i]) for i in range(len(knots))], 1))
        return np.concatenate(columns, axis=1)
