"""Prefix records, their feature blocks, and the probe every learned control shares.

``prefix_rows(split)`` lists the prefix records of a split (one per trajectory, rendering and
crop, with its target: Wait before the onset, the source utterance's action from it), spoken by
one renderer (``renderer=``, eSpeak by default). Feature
blocks per record: ``representation`` (the frozen speech representation of the prefix, see
``hear_gym.envs.onset.features``), ``scalar`` (duration, RMS, mean |x|, zero-crossing rate,
crest factor), ``elapsed`` (prefix duration) and ``text`` (the authored token-fraction text).

``Probe(kind)`` is the paper's probe on one kind of input, always the same classifier (balanced
multinomial logistic regression, C=1, lbfgs, 2,000 iterations) on the same training rows:

==============  ===================================================================
kind            input
==============  ===================================================================
audio           the reference listener: the representation's 12 prosodic features and
                the 8 scalars of the prefix's last 300 ms (``tail``,
                ``agents.onset.tail_scalars``), each read piecewise-linearly
                (``agents.onset.piecewise``), standardized on the training rows
shuffled        the same, with training labels permuted within each prefix position
scalar          the five scalar acoustics, standardized
elapsed         the prefix duration, standardized
text            TF-IDF of word unigrams and bigrams of the token-fraction text
audio_text      the listener's input next to the TF-IDF vector
encoder         a pretrained speech encoder's mean-pooled last layer (``SpeechEncoder``),
                standardized; needs ``encoder=``
single:NAME     one named column of the representation, scalar or tail block (shortcut tests)
==============  ===================================================================

The listener reads levels: a delivery's pitch and range come in levels shared between actions
(``hear_gym/envs/onset/groups/data/deliveries.json``) on top of each voice's own pitch, so an
action's F0 recurs at several places of the scale, and one weight per column gives each action
one interval of it at most. The earlier probe, linear on the whole 140-value representation
(41.8% post-onset on eSpeak), was level with one number: the tail's F0 mean read by a decision
tree (41.0%). The 128 log-mel values are left out: next to the piecewise prosody they cost 11
points held out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from agents.onset.logistic import BalancedLogisticRegression
from agents.onset.piecewise import PiecewiseReading
from agents.onset.tail_scalars import TAIL_SCALAR_NAMES, tail_scalars
from agents.onset.text_features import Tfidf
from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.envs.onset.env import token_fraction_text
from hear_gym.envs.onset.features import (
    REPRESENTATION_NAMES,
    SCALAR_NAMES,
    prefix_representation,
    scalar_acoustics,
)
from hear_gym.envs.onset.groups.generator import groups_by_id, select_groups
from hear_gym.envs.onset.groups.model import N_PREFIXES
from hear_gym.envs.onset.scenes import DEFAULT_RENDERER, rendered_group
from hear_gym.speech.features import N_FEATURES

KINDS = ("audio", "shuffled", "scalar", "elapsed", "text", "audio_text")  # no model needed
_BLOCKS = {
    "audio": ("representation", "tail"),
    "shuffled": ("representation", "tail"),
    "scalar": ("scalar",),
    "elapsed": ("elapsed",),
    "text": ("text",),
    "audio_text": ("representation", "tail", "text"),
    "encoder": ("encoder",),
}
LISTENER_KINDS = ("audio", "shuffled", "audio_text")  # the prosody and tail, read piecewise


@dataclass(frozen=True)
class PrefixRow:
    group_id: str
    branch: str
    rendering: str
    k: int
    target: str
    text: str
    renderer: str = DEFAULT_RENDERER

    def waveform(self) -> np.ndarray:
        return rendered_group(self.group_id, self.renderer).prefix(self.branch, self.rendering, self.k)


def prefix_rows(
    split: str,
    renderings: tuple[str, ...] | None = None,
    limit_groups: int | None = None,
    renderer: str = DEFAULT_RENDERER,
) -> list[PrefixRow]:
    rows = []
    for group in select_groups(split)[:limit_groups]:
        for branch in group.branches:
            targets = group.targets(branch.branch_id)
            for rendering in group.renderings:
                if renderings is not None and rendering not in renderings:
                    continue
                for k in range(N_PREFIXES):
                    text = token_fraction_text(group.transcript, k)
                    rows.append(
                        PrefixRow(group.group_id, branch.branch_id, rendering, k, targets[k], text, renderer)
                    )
    return rows


def blocks_of(waveform: np.ndarray, text: str, needed: tuple[str, ...], encoder=None) -> dict:
    """The feature blocks of one prefix (``encoder``: a ``SpeechEncoder``, for the encoder block)."""
    out: dict = {}
    if "encoder" in needed:
        out["encoder"] = encoder(waveform)
    if "representation" in needed:
        out["representation"] = prefix_representation(waveform)
    if "scalar" in needed:
        out["scalar"] = scalar_acoustics(waveform)
    if "tail" in needed:
        out["tail"] = tail_scalars(waveform)
    if "elapsed" in needed:
        out["elapsed"] = np.array([len(waveform) / AUDIO_RATE], dtype=np.float32)
    if "text" in needed:
        out["text"] = text
    return out


def row_blocks(rows: list[PrefixRow], needed: tuple[str, ...], encoder=None) -> dict:
    """Feature blocks of many rows: arrays stacked by row, texts as a list."""
    per_row = [
        blocks_of(r.waveform() if needed != ("text",) else np.zeros(0), r.text, needed, encoder) for r in rows
    ]
    return {
        name: [b[name] for b in per_row] if name == "text" else np.stack([b[name] for b in per_row])
        for name in needed
    }


def _single_column(kind: str) -> tuple[str, int]:
    name = kind.split(":", 1)[1]
    if name in SCALAR_NAMES:
        return "scalar", SCALAR_NAMES.index(name)
    if name in REPRESENTATION_NAMES:
        return "representation", REPRESENTATION_NAMES.index(name)
    if name in TAIL_SCALAR_NAMES:
        return "tail", TAIL_SCALAR_NAMES.index(name)
    raise ValueError(
        f"unknown single feature {name!r}; scalars: {SCALAR_NAMES}, tail: {TAIL_SCALAR_NAMES}, "
        f"representation: {REPRESENTATION_NAMES[:12]}..."
    )


class Probe:
    def __init__(self, kind: str, seed: int = 0, encoder=None) -> None:
        one_column = kind.startswith("single:")
        if kind not in _BLOCKS and not one_column:
            raise ValueError(f"unknown probe kind {kind!r}; kinds: {tuple(_BLOCKS)} or single:NAME")
        if (kind == "encoder") != (encoder is not None):
            raise ValueError("the encoder probe, and only it, takes encoder=SpeechEncoder(path)")
        self.kind, self.seed, self.encoder = kind, seed, encoder
        self.column = _single_column(kind) if one_column else None
        self.needed = (self.column[0],) if self.column else _BLOCKS[kind]
        self.reading = PiecewiseReading() if kind in LISTENER_KINDS else None
        self.model = BalancedLogisticRegression(C=1.0, max_iter=2_000)
        self.tfidf = Tfidf()
        self.mean = self.scale = self.log_prior = np.zeros(0)

    def _raw_numeric(self, blocks: dict) -> np.ndarray | None:
        if self.column:
            return np.asarray(blocks[self.column[0]], np.float64)[:, [self.column[1]]]
        if self.kind in LISTENER_KINDS:
            return np.concatenate(
                [np.asarray(blocks["representation"])[:, :N_FEATURES], blocks["tail"]], axis=1
            ).astype(np.float64)
        numeric = [blocks[n] for n in self.needed if n != "text"]
        return np.concatenate(numeric, axis=1).astype(np.float64) if numeric else None

    def _numeric(self, blocks: dict) -> np.ndarray | None:
        numeric = self._raw_numeric(blocks)
        return self.reading.transform(numeric) if self.reading and numeric is not None else numeric

    def _design(self, blocks: dict) -> np.ndarray:
        parts = []
        numeric = self._numeric(blocks)
        if numeric is not None:
            parts.append((numeric - self.mean) / self.scale)
        if "text" in self.needed:
            parts.append(self.tfidf.transform(blocks["text"]))
        return np.concatenate(parts, axis=1)

    def fit(self, rows: list[PrefixRow], blocks: dict | None = None, label_seed: int | None = None) -> Probe:
        """Fit on ``rows`` (their ``row_blocks`` may be passed in). ``label_seed`` permutes the labels
        within each prefix position (the shuffled control with ``seed``; permutation checks)."""
        blocks = blocks if blocks is not None else row_blocks(rows, self.needed, self.encoder)
        if self.reading is not None:
            self.reading.fit(self._raw_numeric(blocks))
        numeric = self._numeric(blocks)
        if numeric is not None:
            self.mean = numeric.mean(axis=0)
            std = numeric.std(axis=0)
            self.scale = np.where(std > 0, std, 1.0)
        if "text" in self.needed:
            self.tfidf.fit(blocks["text"])
        labels = [r.target for r in rows]
        if self.kind == "shuffled" and label_seed is None:
            label_seed = self.seed
        if label_seed is not None:
            labels = permuted_within_prefix(rows, labels, label_seed)
        self.model.fit(self._design(blocks), labels)
        counts = np.array([labels.count(c) for c in self.model.classes_], dtype=np.float64)
        self.log_prior = np.log(counts / counts.sum())
        return self

    def predict(self, blocks: dict, prior_corrected: bool = False) -> list[str]:
        """Labels of the rows in ``blocks``. ``prior_corrected``: add the log training frequency
        of each label to its score, which undoes the balanced class weights (the decision of the
        unweighted posterior: Wait regains its 40% prior)."""
        if not prior_corrected:
            return self.model.predict(self._design(blocks))
        scores = self.model.decision_function(self._design(blocks)) + self.log_prior
        return [self.model.classes_[i] for i in scores.argmax(axis=1)]

    def predict_prefix(self, waveform: np.ndarray, text: str) -> str:
        blocks = blocks_of(waveform, text, self.needed, self.encoder)
        batch = {k: [v] if k == "text" else np.asarray(v)[None, :] for k, v in blocks.items()}
        return self.predict(batch)[0]


def permuted_within_prefix(rows: list[PrefixRow], labels: list[str], seed: int) -> list[str]:
    """Labels permuted across rows of the same prefix position (keeps each position's label
    frequencies, breaks the pairing of inputs and labels)."""
    rng = np.random.default_rng(seed)
    out = list(labels)
    for k in range(N_PREFIXES):
        where = [i for i, r in enumerate(rows) if r.k == k]
        for i, j in zip(where, rng.permutation(where), strict=True):
            out[i] = labels[j]
    return out


def trajectory_records(rows: list[PrefixRow], predictions: list[str]) -> list[dict]:
    """Prefix predictions regrouped into the env's trajectory records."""
    by_trajectory: dict[tuple, dict[int, str]] = defaultdict(dict)
    for row, prediction in zip(rows, predictions, strict=True):
        by_trajectory[(row.group_id, row.branch, row.rendering)][row.k] = prediction
    records = []
    for (group_id, branch, rendering), by_k in by_trajectory.items():
        group = groups_by_id()[group_id]
        records.append(
            {
                "group_id": group_id,
                "branch": branch,
                "rendering": rendering,
                "action": group.branch(branch).action,
                "onset_index": group.onset_index,
                "targets": list(group.targets(branch)),
                "predictions": [by_k[k] for k in range(N_PREFIXES)],
            }
        )
    return records
