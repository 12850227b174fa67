"""A pretrained speech encoder as the probe's frozen representation (the paper's WavLM row).

``SpeechEncoder(path)`` loads a model and its feature extractor from a local folder only
(``local_files_only``: nothing is downloaded; any ``AutoModel`` speech encoder saved with
``save_pretrained``, e.g. WavLM Base Plus) and maps a 16 kHz prefix to the mean over time of the
last hidden layer, as the paper pools it. ``training.tiny_model.build_tiny_speech_encoder``
builds a randomly initialized WavLM offline, for tests and dry runs of this code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hear_gym.core.spaces import AUDIO_RATE


class SpeechEncoder:
    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise ValueError(f"{path} is not a saved speech encoder (no config.json)")
        try:
            import torch
            from transformers import AutoFeatureExtractor, AutoModel
        except ImportError as exc:
            raise RuntimeError("a speech encoder needs hear-gym[agents] (torch, transformers)") from exc
        self.torch = torch
        self.path = path
        self.extractor = AutoFeatureExtractor.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).eval()

    def __call__(self, waveform: np.ndarray) -> np.ndarray:
        inputs = self.extractor(
            np.asarray(waveform, dtype=np.float32), sampling_rate=AUDIO_RATE, return_tensors="pt"
        )
        with self.torch.no_grad():
            hidden = self.model(**inputs).last_hidden_state[0]
        return hidden.mean(dim=0).numpy().astype(np.float32)
