"""The cross-renderer table's plumbing (``benchmarks/speech/cross_renderer.py``): cells keyed (trained
on, tested on), transfer costs paired against the tested renderer's own probe, renderers a probe
that cannot speak (an optional extra missing) left out with the reason, the Markdown layout. A stand-in probe family with a
renderer-dependent feature shift stands in for rendering (the real probes at full size are the
benchmark's run, its page benchmarks/speech/cross_renderer.md); one tiny real run checks that the three
probe families plug in (slow tier: about a minute on a loaded 2-core machine)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.speech import cross_renderer
from benchmarks.speech.cross_renderer import cross_table, to_markdown
from benchmarks.speech.cross_renderer_probes import FAMILIES, Sizes, _Caches, balanced_terms
from hear_gym.speech.cache_dir import render_store
from hear_gym.speech.renderers import RENDERERS
from hear_gym.stats.bootstrap import contrast_ci

SHIFT = {"espeak": 0.0, "praat": 1.5, "far": 6.0}  # where each stand-in renderer moves the feature


@pytest.fixture(autouse=True)
def stand_in_renderers(monkeypatch):
    """The table builds no renderer for stand-in rows: every name speaks, at version 1."""
    monkeypatch.setattr(cross_renderer, "make_renderer", lambda name: SimpleNamespace(name=name, version="1"))


class ShiftedThreshold:
    """Two classes one unit apart on one feature; each renderer adds its own offset, so a
    threshold learned on one renderer misplaces the other's classes in proportion to the shift."""

    name, metric, group_unit, version = "stand_in", "balanced accuracy", "groups", "stand-in-1"

    def __init__(self) -> None:
        self.featurized = []

    def rows(self, split: str, renderer: str):
        self.featurized.append((split, renderer))
        rng = np.random.default_rng({"train": 0, "test": 1}[split])
        y = np.repeat([0, 1], 200)
        x = y + SHIFT[renderer] + rng.normal(0, 0.25, len(y))
        return x, y, np.arange(len(y)) % 40

    def fit(self, renderer: str, train_rows) -> float:
        x, y, _ = train_rows
        return (x[y == 0].mean() + x[y == 1].mean()) / 2

    def score(self, threshold: float, rows):
        x, y, groups = rows
        return balanced_terms(((x > threshold) == y).astype(float), y, groups)


def test_cells_and_paired_transfer_costs():
    table = cross_table(ShiftedThreshold(), ("espeak", "praat", "far"))
    assert set(table.cells) == {(a, b) for a in SHIFT for b in SHIFT}
    assert set(table.transfer) == {(a, b) for a in SHIFT for b in SHIFT if a != b}
    for r in SHIFT:
        assert table.cells[r, r].point > 0.95  # within renderer: the classes are 4 SD apart
    # a larger shift costs more: espeak's threshold sits 1.5 below praat's classes, 6 below far's
    assert table.cells["espeak", "praat"].point < table.cells["praat", "praat"].point
    assert table.cells["espeak", "far"].point == pytest.approx(0.5)
    for (a, b), cost in table.transfer.items():
        assert cost.point == pytest.approx(table.cells[a, b].point - table.cells[b, b].point)
        assert cost.low <= cost.point <= cost.high
    assert table.transfer["espeak", "far"].high < 0


def test_balanced_terms_give_the_mean_of_class_accuracies():
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    correct = np.array([1, 1, 0, 1, 0, 0, 0, 0], dtype=float)
    estimate = contrast_ci(balanced_terms(correct, y, np.array(list("aabbccdd"))))
    assert estimate.point == pytest.approx((2 / 3 + 1 / 5) / 2)


def test_renderers_without_their_extra_are_left_out_with_the_reason(monkeypatch):
    def make_renderer(name: str):
        if name == "far":
            raise ImportError("far needs its optional extra")
        return SimpleNamespace(name=name, version="1")

    monkeypatch.setattr(cross_renderer, "make_renderer", make_renderer)
    table = cross_table(ShiftedThreshold(), ("espeak", "far"))
    assert not table.cells and not table.renderers
    assert table.skipped == {"far": "far needs its optional extra"}
    text = to_markdown(table)
    assert "skipped far: far needs its optional extra" in text
    assert "No table: fewer than two renderers can speak" in text


def test_the_markdown_has_a_row_and_column_per_renderer():
    text = to_markdown(cross_table(ShiftedThreshold(), ("espeak", "praat", "far")))
    assert text.count("| trained on \\ tested on | espeak | praat | far |") == 2  # cells, transfer
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ")]
    assert rows.count("| far") == 2 and "skipped" not in text


def test_featurized_splits_are_kept_per_renderer(tmp_path):
    first = ShiftedThreshold()
    table = cross_table(first, ("espeak", "praat"), row_cache=tmp_path)
    again = ShiftedThreshold()
    assert cross_table(again, ("espeak", "praat"), row_cache=tmp_path).cells == table.cells
    assert len(first.featurized) == 4 and not again.featurized
    other_size = ShiftedThreshold()
    other_size.version = "stand-in-1|smaller"
    cross_table(other_size, ("espeak", "praat"), row_cache=tmp_path)
    assert len(other_size.featurized) == 4


def test_renders_go_to_the_store_other_benchmark_jobs_read(tmp_path, monkeypatch):
    """A second job (the condition grid, a rerun) finds the table's speech on disk, not only
    in this process's memory: a neural render costs about 2 s on a loaded machine."""
    monkeypatch.setenv("HEAR_GYM_CACHE", str(tmp_path))
    cache = _Caches()("espeak")
    assert cache.disk is not None and cache.disk.folder == render_store() == tmp_path / "renders"


@pytest.mark.slow
def test_the_real_probes_plug_in_at_tiny_size():
    """Each family trains and scores on the registry's renderers at toy size (nothing about
    accuracy: two scenarios or a few items cannot say much)."""
    sizes = Sizes(hear2act_scenarios=1, voicegate_per_family=3, onset_groups=1)
    renderers = tuple(r for r in ("espeak", "praat") if r in RENDERERS)
    for name in FAMILIES:
        table = cross_table(FAMILIES[name](sizes), renderers)
        assert table.renderers == renderers and len(table.cells) == len(renderers) ** 2
        assert all(0.0 <= e.point <= 1.0 for e in table.cells.values())
