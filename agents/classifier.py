"""The small classifier every trained listener in ``agents`` is: a two-layer MLP behind a fixed
feature normalization (Hear2Act's audio probes, VoiceGate's audio gate), its seeded training,
and its safetensors checkpoint format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from hear_gym.core.paths import writable_file


def mlp(n_in: int, hidden: int, n_out: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, n_out))


class NormalizedMLP:
    """An ``mlp`` behind a fixed feature normalization; the classifier both the Hear2Act probes
    and the VoiceGate gate are. Checkpoints: safetensors with ``model.*`` and ``norm.*`` tensors
    and JSON metadata (the owner's config and report)."""

    def __init__(
        self,
        config: Any,
        model: torch.nn.Module,
        mean: np.ndarray,
        std: np.ndarray,
        report: dict | None = None,
    ) -> None:
        self.config, self.report = config, report or {}
        self.model, self.mean, self.std = model.eval(), mean, std

    def class_report(self, x: np.ndarray, y: np.ndarray, classes: tuple[str, ...]) -> dict[str, float]:
        """Accuracy per class (classes present in ``y``), their mean (``balanced``) and ``n``."""
        predicted = self.predict_features(x)
        report = {
            name: float((predicted[y == i] == i).mean()) for i, name in enumerate(classes) if (y == i).any()
        }
        return {**report, "balanced": float(np.mean(list(report.values()))), "n": int(len(y))}

    def predict_features(self, x: np.ndarray) -> np.ndarray:
        return self.logits(x).argmax(dim=-1).numpy()

    def logits(self, x: np.ndarray) -> torch.Tensor:
        """The model's class scores, one row per feature row."""
        with torch.no_grad():
            return self.model(torch.from_numpy(((x - self.mean) / self.std).astype(np.float32)))

    def save_checkpoint(self, path: Path, metadata: dict[str, str]) -> None:
        """Written next to ``path`` and moved into place: a failed save never leaves half a file
        where an earlier checkpoint was."""
        tensors = {f"model.{k}": v.contiguous() for k, v in self.model.state_dict().items()}
        tensors["norm.mean"], tensors["norm.std"] = torch.from_numpy(self.mean), torch.from_numpy(self.std)
        path = writable_file(path)
        partial = path.with_name(f".{path.name}.partial")
        save_file(tensors, str(partial), metadata=metadata)
        os.replace(partial, path)

    @staticmethod
    def checkpoint_metadata(path: str | Path) -> dict[str, str]:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as fh:
            return fh.metadata() or {}

    @staticmethod
    def load_weights(
        path: str | Path, hidden: int, n_classes: int
    ) -> tuple[torch.nn.Module, np.ndarray, np.ndarray]:
        tensors = load_file(str(path))
        weights = {k[len("model.") :]: v for k, v in tensors.items() if k.startswith("model.")}
        model = mlp(weights["0.weight"].shape[1], hidden, n_classes)
        model.load_state_dict(weights)
        return model, tensors["norm.mean"].numpy(), tensors["norm.std"].numpy()


def train_mlp(
    x: np.ndarray, y: np.ndarray, n_classes: int, hidden: int, epochs: int, learning_rate: float, seed: int
) -> tuple[torch.nn.Module, np.ndarray, np.ndarray]:
    """Full-batch Adam on cross-entropy with class-balanced weights; seeded, CPU. Returns the
    model and the feature normalization (mean, std) it expects."""
    generator = torch.Generator().manual_seed(seed)
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    model = mlp(x.shape[1], hidden, n_classes)
    with torch.no_grad():
        for p in model.parameters():  # seeded init, independent of torch's global generator
            p.copy_(torch.randn(p.shape, generator=generator) * (0.1 if p.ndim > 1 else 0.0))
    counts = np.bincount(y, minlength=n_classes).astype(np.float32)
    weights = torch.from_numpy(counts.sum() / np.maximum(counts, 1) / n_classes)
    inputs = torch.from_numpy(((x - mean) / std).astype(np.float32))
    labels = torch.from_numpy(y.astype(np.int64))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    for _ in range(epochs):
        optimizer.zero_grad()
        loss_fn(model(inputs), labels).backward()
        optimizer.step()
    return model.eval(), mean.astype(np.float32), std.astype(np.float32)
