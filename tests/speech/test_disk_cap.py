"""The on-disk render cache stays under its cap, evicting the least recently used entries first,
and is safe for several processes sharing one folder."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hear_gym.speech.cache import (
    DEFAULT_DISK_CAP,
    DISK_CAP_ENV,
    LOW_WATER,
    STALE_TEMP_SECONDS,
    RenderCache,
    disk_cap,
)
from hear_gym.speech.renderers import SAMPLE_RATE, Rendering, RenderRequest, cache_key

SAMPLES = 1_000  # per rendering


class CountingRenderer:
    """Renders in no time: a ramp per request, the same for the same request."""

    name, version = "counting", "1"

    def describe(self, request: RenderRequest) -> dict:
        return {"text": request.text}

    def render(self, request: RenderRequest) -> Rendering:
        start = float(sum(request.text.encode()))
        return Rendering(np.arange(start, start + SAMPLES, dtype=np.float32), SAMPLE_RATE, {})


def request(i: int) -> RenderRequest:
    return RenderRequest(f"utterance {i}", "neutral", "m1")


def entry_size(folder: Path) -> int:
    """Bytes of one stored rendering (header included), measured from a store."""
    cache = RenderCache(CountingRenderer(), disk_dir=folder)
    cache.render(request(-1))
    path = cache.disk.path(cache_key(cache.renderer, request(-1)))
    size = path.stat().st_size
    path.unlink()
    return size


def stored(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_size for p in folder.rglob("*.f32")}


def test_least_recently_used_entries_go_first_and_the_store_stays_under_the_cap(tmp_path):
    size = entry_size(tmp_path)
    cap = 10 * size + size // 2  # room for ten entries
    renderer = CountingRenderer()
    # memory holds one rendering, so every other one is read from the disk store
    cache = RenderCache(renderer, max_bytes=1, disk_dir=tmp_path, disk_max_bytes=cap)
    path = {i: cache.disk.path(cache_key(renderer, request(i))) for i in range(40)}
    for i in range(10):
        cache.render(request(i))
    assert cache.stats.evicted == 0 and len(stored(tmp_path)) == 10
    for i in (0, 1):  # used again: now the most recently used
        cache.render(request(i))
    assert cache.stats.disk_hits == 2

    cache.render(request(10))  # no room: the least recently used go
    kept = {i for i in range(11) if path[i].exists()}
    gone = set(range(11)) - kept
    assert gone and cache.stats.evicted == len(gone)
    order_of_use = [*range(2, 10), 0, 1, 10]
    assert order_of_use[: len(gone)] == sorted(gone, key=order_of_use.index)  # oldest use first
    assert sum(stored(tmp_path).values()) <= LOW_WATER * cap

    for i in range(11, 40):
        cache.render(request(i))
        assert sum(stored(tmp_path).values()) <= cap
    assert cache.stats.renders == 40 and cache.stats.evicted == 40 - len(stored(tmp_path))
    for p in stored(tmp_path):  # what is left is served, whole
        assert RenderCache(renderer, disk_dir=tmp_path).disk.load(p.stem) is not None


def test_a_file_being_written_is_never_evicted_and_abandoned_ones_are(tmp_path):
    size = entry_size(tmp_path)
    cache = RenderCache(CountingRenderer(), max_bytes=1, disk_dir=tmp_path, disk_max_bytes=3 * size)
    cache.render(request(0))
    shard = cache.disk.path(cache_key(cache.renderer, request(0))).parent
    writing, abandoned = shard / "being-written.tmp", shard / "abandoned.tmp"
    writing.write_bytes(b"\0" * size)
    abandoned.write_bytes(b"\0" * size)
    long_ago = time.time() - 2 * STALE_TEMP_SECONDS
    os.utime(abandoned, (long_ago, long_ago))
    for i in range(1, 8):
        cache.render(request(i))
    assert cache.stats.evicted > 0
    assert writing.exists() and not abandoned.exists()


def writer(folder: str, cap: int, seed: int, renders: int) -> dict:
    """(child process) Renders and re-reads random requests through a capped shared folder."""
    rng = np.random.default_rng(seed)
    cache = RenderCache(CountingRenderer(), max_bytes=1, disk_dir=Path(folder), disk_max_bytes=cap)
    for i in rng.integers(0, 4 * renders, renders):
        rendering = cache.render(request(int(i)))
        assert np.array_equal(rendering.waveform, CountingRenderer().render(request(int(i))).waveform)
    return {"evicted": cache.stats.evicted, "corrupt": cache.stats.corrupt}


def test_processes_sharing_a_capped_folder(tmp_path):
    size, processes = entry_size(tmp_path), 3
    cap = 20 * size
    code = (
        f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_disk_cap as t; "
        f"print(json.dumps(t.writer({str(tmp_path)!r}, {cap}, int(sys.argv[1]), 150)))"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", code, str(seed)], stdout=subprocess.PIPE, text=True)
        for seed in range(processes)
    ]
    results = [json.loads(child.communicate(timeout=300)[0]) for child in children]
    assert all(child.returncode == 0 for child in children)
    assert sum(r["evicted"] for r in results) > 0 and all(r["corrupt"] == 0 for r in results)
    # each process counts the others' writes at its next scan, at least every (1 - LOW_WATER) cap
    assert sum(stored(tmp_path).values()) <= cap * (LOW_WATER + processes * (1 - LOW_WATER))
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_cap_comes_from_the_argument_the_environment_or_the_default(monkeypatch, tmp_path):
    monkeypatch.delenv(DISK_CAP_ENV, raising=False)
    assert RenderCache(CountingRenderer(), disk_dir=tmp_path).disk.max_bytes == DEFAULT_DISK_CAP
    monkeypatch.setenv(DISK_CAP_ENV, "500M")
    assert RenderCache(CountingRenderer(), disk_dir=tmp_path).disk.max_bytes == 500 * 2**20
    assert disk_cap(4096) == 4096
    monkeypatch.setenv(DISK_CAP_ENV, "1234")
    assert disk_cap() == 1234
    for bad in ("lots", "0", "-5G", "1.5G"):
        monkeypatch.setenv(DISK_CAP_ENV, bad)
        with pytest.raises(ValueError, match=DISK_CAP_ENV):
            RenderCache(CountingRenderer(), disk_dir=tmp_path)
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="disk_max_bytes"):
            disk_cap(bad)
