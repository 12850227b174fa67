"""The probes of the cross-renderer table (``benchmarks/speech/cross_renderer.py``), each behind one
interface: featurize a split as one renderer speaks it (``rows``), train on training rows
(``fit``), and score a trained probe on held-out rows as a linear combination of per-group ratio
sums (``hear_gym.stats.bootstrap``), so every cell and every paired contrast gets a
group-bootstrap interval from the same helpers. ``version`` names what the rows are built from
(the family's generator and its share of ``Sizes``), for the table's row cache.

* ``hear2act_concern``: the T+S^ concern probe of the Hear2Act condition grid
  (``agents.hear2act.audio_probe``: resolved vs unresolved, prosodic features relative to the
  speaker's opening request, every reaction under both feedback realizations). Balanced
  accuracy; groups: test scenarios.
* ``voicegate_gate``: the VoiceGate audio gate (``agents.voicegate.audio_gate``, the benchmark's
  own ``switch`` training set: speaker-switch pairs and side-talk items). Balanced accuracy of
  "for me" vs "not for me"; groups: item groups.
* ``onset_audio``: the Onset audio probe (``agents.onset.probes``, ``Probe("audio")`` on the
  prefix representation, the training split's clean prefixes). Post-onset accuracy, the Onset
  benchmark's headline, over the test split's clean and noise15 renderings; groups: contrast
  groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agents.classifier import train_mlp
from agents.hear2act.audio_probe import ProbeConfig, ProbeData, build_data
from agents.hear2act.audio_probe import fit as fit_probe
from agents.onset.probes import Probe, prefix_rows, row_blocks, trajectory_records
from agents.voicegate.audio_gate import GATE_CLASSES, AudioGate, GateConfig, examples, labelled_items
from hear_gym.envs.hear2act.scenarios.generator import GENERATOR_VERSION as HEAR2ACT_VERSION
from hear_gym.envs.onset.family import VERSION as ONSET_VERSION
from hear_gym.envs.onset.metrics import group_sums
from hear_gym.envs.voicegate.items.generator import GENERATOR_VERSION as VOICEGATE_VERSION
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import make_renderer
from hear_gym.stats.bootstrap import RatioSums

Terms = list[tuple[float, RatioSums]]  # a statistic as a weighted sum of per-group ratios
RENDER_CACHE_BYTES = 768 * 2**20


@dataclass(frozen=True)
class Sizes:
    """How much of each split the probes use (``None``: all). The defaults are the benchmarks'
    own sizes: the condition grid's 96 training scenarios, every gate item, every Onset group."""

    hear2act_scenarios: int | None = 96
    voicegate_per_family: int | None = None
    onset_groups: int | None = None


class ProbeFamily(Protocol):
    name: str
    metric: str  # what a cell of the table reports
    group_unit: str  # what the bootstrap resamples
    version: str  # the generator and the sizes the rows come from

    def rows(self, split: str, renderer: str) -> Any:
        """``split`` ("train" or "test") spoken by ``renderer``, featurized (picklable)."""
        ...

    def fit(self, renderer: str, train_rows: Any) -> Any:
        """A probe trained on ``renderer``'s training rows."""
        ...

    def score(self, model: Any, rows: Any) -> Terms: ...


def balanced_terms(correct: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> Terms:
    """Balanced accuracy (the mean of the classes' accuracies) as per-group ratio sums, one
    term per class present, each weighted 1 / (classes present)."""
    names, index = np.unique(groups, return_inverse=True)
    classes = np.unique(labels)
    terms = []
    for label in classes:
        member = (labels == label).astype(float)
        sums = RatioSums(
            np.bincount(index, weights=correct * member, minlength=len(names)),
            np.bincount(index, weights=member, minlength=len(names)),
        )
        terms.append((1.0 / len(classes), sums))
    return terms


class _Caches:
    """One render cache per renderer, shared by a family's training and held-out rows, over the
    shared disk store (``render_store``): the condition grid and the listening-value table render
    the same Hear2Act turns, and the neural voice renders about 5x faster than real time on one
    core, so a second job should not render them again."""

    def __init__(self) -> None:
        self._caches: dict[str, RenderCache] = {}

    def __call__(self, renderer: str) -> RenderCache:
        if renderer not in self._caches:
            self._caches[renderer] = RenderCache(
                make_renderer(renderer), max_bytes=RENDER_CACHE_BYTES, disk_dir=render_store()
            )
        return self._caches[renderer]


# -- Hear2Act ---------------------------------------------------------------------------------
class Hear2ActConcern:
    name = "hear2act_concern"
    metric = "balanced accuracy, resolved vs unresolved"
    group_unit = "test scenarios"

    def __init__(self, sizes: Sizes) -> None:
        self.sizes, self.caches = sizes, _Caches()
        self.version = f"{HEAR2ACT_VERSION}|scenarios={sizes.hear2act_scenarios}"

    def _config(self, renderer: str):
        return ProbeConfig(
            task="concern",
            features="prosody_relative",
            renderer=renderer,
            prosody=DEFAULT_PROSODY,
            max_scenarios=self.sizes.hear2act_scenarios,
        )

    def rows(self, split: str, renderer: str) -> ProbeData:
        seed = {"train": 0, "test": 1}[split]  # the condition grid's draws
        return build_data(self._config(renderer), split, self.caches(renderer), seed=seed)

    def fit(self, renderer: str, train_rows: ProbeData):
        return fit_probe(self._config(renderer), train_rows)

    def score(self, model, rows) -> Terms:
        correct = (model.predict_features(rows.x) == rows.y).astype(float)
        return balanced_terms(correct, rows.y, rows.item_ids)


# -- VoiceGate --------------------------------------------------------------------------------
class VoiceGateGate:
    name = "voicegate_gate"
    metric = "balanced accuracy, for me vs not for me"
    group_unit = "item groups"

    def __init__(self, sizes: Sizes) -> None:
        self.sizes, self.caches = sizes, _Caches()
        self.version = f"{VOICEGATE_VERSION}|per_family={sizes.voicegate_per_family}"

    def _config(self, renderer: str):
        return GateConfig(renderer=renderer, limit_per_family=self.sizes.voicegate_per_family)

    def rows(self, split: str, renderer: str):
        config = self._config(renderer)
        x, y, _ = examples(split, self.caches(renderer), config)
        groups = np.array([item.group for item, _ in labelled_items(split, config)])
        return x, y, groups

    def fit(self, renderer: str, train_rows):
        config = self._config(renderer)
        x, y, _ = train_rows
        model, mean, std = train_mlp(
            x, y, len(GATE_CLASSES), config.hidden, config.epochs, config.learning_rate, config.seed
        )
        return AudioGate(config, model, mean, std)

    def score(self, model, rows) -> Terms:
        x, y, groups = rows
        return balanced_terms((model.predict_features(x) == y).astype(float), y, groups)


# -- Onset ------------------------------------------------------------------------------------
class OnsetAudio:
    name = "onset_audio"
    metric = "post-onset accuracy (clean and noise15)"
    group_unit = "contrast groups"

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes
        self.needed = Probe("audio").needed  # the listener's blocks: the representation and the tail
        self.version = f"{ONSET_VERSION}|groups={sizes.onset_groups}|{'+'.join(self.needed)}"

    def rows(self, split: str, renderer: str):
        rows = prefix_rows(split, limit_groups=self.sizes.onset_groups, renderer=renderer)
        return rows, row_blocks(rows, self.needed)

    def fit(self, renderer: str, train_rows):
        rows, blocks = train_rows
        return Probe("audio").fit(rows, blocks)

    def score(self, model, rows) -> Terms:
        prefixes, blocks = rows
        records = trajectory_records(prefixes, model.predict(blocks))
        groups = sorted({r["group_id"] for r in records})
        return [(1.0, group_sums(records, "post_onset_accuracy", groups))]


FAMILIES: dict[str, Callable[[Sizes], ProbeFamily]] = {
    "hear2act_concern": Hear2ActConcern,
    "voicegate_gate": VoiceGateGate,
    "onset_audio": OnsetAudio,
}
