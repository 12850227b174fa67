"""Content-addressed render cache: a bounded in-memory LRU over an optional on-disk store.

Keys hash the renderer's name and version with the full request, so a renderer change never
serves stale audio. Disk entries are ``MAGIC + blake2b(samples) + float32 samples``; an entry
whose checksum does not match (truncated, overwritten, bit rot) is deleted and rendered again,
never served. Writes go to a temporary file renamed into place, so a crash leaves no half entry.
Memory holds the waveform with its plan record and is bounded in bytes; a disk hit recomputes the
plan record with ``Renderer.describe`` (cheap and deterministic).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hear_gym.speech.renderers import (
    SAMPLE_RATE,
    Renderer,
    Rendering,
    RenderRequest,
    cache_key,
    make_renderer,
)

MAGIC = b"HGWAV1\0\0"
_DIGEST = 32


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    renders: int = 0
    corrupt: int = 0


class RenderCache:
    def __init__(
        self, renderer: Renderer, max_bytes: int = 256 * 2**20, disk_dir: Path | None = None
    ) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.renderer = renderer
        self.max_bytes = max_bytes
        self.disk_dir = Path(disk_dir) if disk_dir is not None else None
        self.stats = CacheStats()
        self._memory: OrderedDict[str, Rendering] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def render(self, request: RenderRequest) -> Rendering:
        key = cache_key(self.renderer, request)
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.stats.memory_hits += 1
                return hit
        waveform = self._load(key)
        if waveform is not None:
            self.stats.disk_hits += 1
            return self._remember(key, Rendering(waveform, SAMPLE_RATE, self.renderer.describe(request)))
        rendering = self.renderer.render(request)
        self.stats.renders += 1
        self._store(key, rendering.waveform)
        return self._remember(key, rendering)

    def contains(self, request: RenderRequest) -> bool:
        key = cache_key(self.renderer, request)
        path = self._path(key)
        return key in self._memory or (path is not None and path.exists())

    def _remember(self, key: str, rendering: Rendering) -> Rendering:
        rendering = Rendering(_frozen(rendering.waveform), rendering.sample_rate, rendering.plan)
        with self._lock:
            if key not in self._memory:
                self._memory[key] = rendering
                self._bytes += rendering.waveform.nbytes
            self._memory.move_to_end(key)
            while self._bytes > self.max_bytes and len(self._memory) > 1:
                _, old = self._memory.popitem(last=False)
                self._bytes -= old.waveform.nbytes
        return rendering

    def _path(self, key: str) -> Path | None:
        return None if self.disk_dir is None else self.disk_dir / key[:2] / f"{key}.f32"

    def _load(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        data = memoryview(path.read_bytes())  # views, not copies, of a ~100 kB entry
        header = len(MAGIC) + _DIGEST
        body = data[header:]
        valid = (
            data[: len(MAGIC)] == MAGIC
            and len(body) % 4 == 0
            and hashlib.blake2b(body, digest_size=_DIGEST).digest() == data[len(MAGIC) : header]
        )
        if not valid:
            self.stats.corrupt += 1
            path.unlink(missing_ok=True)
            return None
        return np.frombuffer(body, dtype="<f4")  # read-only over the file's bytes; kept as is

    def _store(self, key: str, waveform: np.ndarray) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        body = np.asarray(waveform, dtype="<f4").tobytes()
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(MAGIC + hashlib.blake2b(body, digest_size=_DIGEST).digest() + body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _frozen(waveform: np.ndarray) -> np.ndarray:
    """Cached arrays are shared between callers, so they are read-only."""
    waveform = np.asarray(waveform, dtype=np.float32)
    if waveform.flags.writeable:
        waveform = waveform.copy()
        waveform.flags.writeable = False
    return waveform


_SHARED: dict[tuple[str, str, str | None], RenderCache] = {}
_SHARED_LOCK = threading.Lock()


def shared_render_cache(renderer_name: str, disk_dir: Path | None = None) -> RenderCache:
    """This process's one cache per (renderer, disk store): every env built in a process (one per
    evaluated condition) then reuses the same in-memory renderings instead of each reading the
    disk store again."""
    renderer = make_renderer(renderer_name)
    key = (renderer.name, renderer.version, str(Path(disk_dir).resolve()) if disk_dir else None)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = RenderCache(renderer, disk_dir=disk_dir)
        return _SHARED[key]
