"""Balanced multinomial logistic regression (the paper's probe: C=1, lbfgs, 2,000 iterations),
in NumPy/SciPy so the agents need no scikit-learn.

The objective is scikit-learn's for ``LogisticRegression(C, class_weight="balanced",
solver="lbfgs")``: the class-weighted mean cross-entropy plus ``||W||^2 / (2 C sum(weights))``
(intercepts unpenalized), minimized by SciPy's L-BFGS-B with scikit-learn's stopping settings.
Starting from zeros, the fit is deterministic; ``tests/agents/onset`` checks it against
scikit-learn where that is installed. Parameters save to and load from JSON (no pickle).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp


class BalancedLogisticRegression:
    def __init__(self, C: float = 1.0, max_iter: int = 2_000, tol: float = 1e-4) -> None:
        self.C, self.max_iter, self.tol = C, max_iter, tol
        self.classes_: list[str] = []
        self.coef_ = np.zeros((0, 0))
        self.intercept_ = np.zeros(0)
        self.n_iter_ = 0

    def fit(self, X: np.ndarray, labels: list[str]) -> BalancedLogisticRegression:
        X = np.asarray(X, dtype=np.float64)
        self.classes_ = sorted(set(labels))
        y = np.array([self.classes_.index(label) for label in labels])
        n, d = X.shape
        k = len(self.classes_)
        counts = np.bincount(y, minlength=k)
        weights = (n / (k * counts))[y]
        total = weights.sum()
        onehot = np.eye(k)[y]

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            W, b = theta[: d * k].reshape(k, d), theta[d * k :]
            logits = X @ W.T + b
            log_p = logits - logsumexp(logits, axis=1, keepdims=True)
            value = -(weights * (onehot * log_p).sum(axis=1)).sum() / total + (W**2).sum() / (
                2 * self.C * total
            )
            residual = (np.exp(log_p) - onehot) * weights[:, None] / total
            grad_W = residual.T @ X + W / (self.C * total)
            return float(value), np.concatenate([grad_W.ravel(), residual.sum(axis=0)])

        result = minimize(
            loss,
            np.zeros(k * d + k),
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": self.max_iter,
                "maxls": 50,
                "gtol": self.tol,
                "ftol": 64 * np.finfo(float).eps,
            },
        )
        self.coef_, self.intercept_ = result.x[: d * k].reshape(k, d), result.x[d * k :]
        self.n_iter_ = int(result.nit)
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64) @ self.coef_.T + self.intercept_

    def predict(self, X: np.ndarray) -> list[str]:
        return [self.classes_[i] for i in self.decision_function(X).argmax(axis=1)]

    def to_json(self) -> dict:
        return {
            "C": self.C,
            "classes": self.classes_,
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict) -> BalancedLogisticRegression:
        model = cls(C=data["C"])
        model.classes_ = list(data["classes"])
        model.coef_ = np.asarray(data["coef"], dtype=np.float64)
        model.intercept_ = np.asarray(data["intercept"], dtype=np.float64)
        return model

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()), encoding="utf-8")
