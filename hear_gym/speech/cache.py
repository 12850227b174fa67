"""Content-addressed render cache: a bounded in-memory LRU over an optional on-disk store.

Keys hash the renderer's name and version with the full request, so a renderer change never
serves stale audio. Disk entries are ``MAGIC + blake2b(samples) + float32 samples``; an entry
whose checksum does not match (truncated, overwritten, bit rot) is deleted and rendered again,
never served. Writes go to a temporary file renamed into place, so a crash leaves no half entry.
Memory holds the waveform with its plan record and is bounded in bytes; a disk hit recomputes the
plan record with ``Renderer.describe`` (cheap and deterministic) when ``render`` is asked for it,
never for ``waveform``. The checksum a disk entry is read or written with is the clip's content
key for the feature caches (``hear_gym.speech.features.remember_digest``), so looking up a
rendered clip's features hashes nothing again.

The disk store is capped too (``disk_max_bytes``, else ``$HEAR_GYM_RENDER_CACHE_MAX_BYTES``, else
2 GiB): before an entry is written, entries are deleted least recently used first (last use is
the file's modification time, set when written and on every disk hit) until the store with the
new entry holds at most ``LOW_WATER`` of the cap. Several processes may share a folder: each keeps
a running total (a scan of the folder plus its own writes) and scans again whenever that total
would pass the cap or it has written ``1 - LOW_WATER`` of the cap since its last scan, so other
processes' writes are counted at the latest then. Eviction deletes finished entries only: an
entry being written is a temporary file until it is complete (temporary files a killed process
left are deleted after ``STALE_TEMP_SECONDS``), and a reader holding an entry another process
deletes still reads it whole.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hear_gym.speech.features import remember_digest, utterance_pooled_log_mel, utterance_prosodic_features
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
DISK_CAP_ENV = "HEAR_GYM_RENDER_CACHE_MAX_BYTES"
DEFAULT_DISK_CAP = 2 * 2**30
LOW_WATER = 0.9  # eviction frees down to this share of the cap, so it does not run on every write
STALE_TEMP_SECONDS = 3600  # a write takes milliseconds; a temporary file this old was abandoned
_ENTRY_SUFFIX, _TEMP_SUFFIX = ".f32", ".tmp"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    renders: int = 0
    corrupt: int = 0
    evicted: int = 0  # disk entries this cache deleted to stay under the cap


class RenderCache:
    def __init__(
        self,
        renderer: Renderer,
        max_bytes: int = 256 * 2**20,
        disk_dir: Path | None = None,
        disk_max_bytes: int | None = None,
    ) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.renderer = renderer
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self.disk = (
            None if disk_dir is None else _DiskStore(Path(disk_dir), disk_cap(disk_max_bytes), self.stats)
        )
        self._memory: OrderedDict[str, tuple[np.ndarray, dict | None]] = OrderedDict()  # waveform, plan
        self._bytes = 0
        self._lock = threading.Lock()

    def render(self, request: RenderRequest) -> Rendering:
        """The rendering of ``request``, plan record included."""
        key = cache_key(self.renderer, request)
        waveform, plan = self._get(key, request)
        if plan is None:
            plan = self.renderer.describe(request)
            with self._lock:
                if key in self._memory:
                    self._memory[key] = (waveform, plan)
        return Rendering(waveform, SAMPLE_RATE, plan)

    def waveform(self, request: RenderRequest) -> np.ndarray:
        """The waveform of ``request`` (read-only, shared), without its plan record."""
        return self._get(cache_key(self.renderer, request), request)[0]

    def prosodic_features(self, request: RenderRequest) -> np.ndarray:
        """``hear_gym.speech.features.prosodic_features`` of the rendering of ``request``, looked
        up by the request first (``utterance_prosodic_features``): no audio is read or rendered
        for a turn whose features are stored."""
        return utterance_prosodic_features(
            cache_key(self.renderer, request), lambda: self.waveform(request), SAMPLE_RATE
        )

    def heard(self, request: RenderRequest) -> Heard:
        """``request`` as a listener gets it: its features without reading audio where they are
        stored, the waveform only when asked for."""
        return Heard(self, request)

    def contains(self, request: RenderRequest) -> bool:
        key = cache_key(self.renderer, request)
        return key in self._memory or (self.disk is not None and self.disk.path(key).exists())

    def _get(self, key: str, request: RenderRequest) -> tuple[np.ndarray, dict | None]:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.stats.memory_hits += 1
                return hit
        loaded = None if self.disk is None else self.disk.load(key)
        if loaded is not None:
            self.stats.disk_hits += 1
            return self._remember(key, loaded[0], None, loaded[1])
        rendering = self.renderer.render(request)
        self.stats.renders += 1
        digest = None if self.disk is None else self.disk.store(key, rendering.waveform)
        return self._remember(key, rendering.waveform, rendering.plan, digest)

    def _remember(
        self, key: str, waveform: np.ndarray, plan: dict | None, digest: bytes | None
    ) -> tuple[np.ndarray, dict | None]:
        waveform = _frozen(waveform)
        if digest is not None:
            remember_digest(waveform, digest)
        with self._lock:
            entry = self._memory.get(key)
            if entry is None:
                entry = self._memory[key] = (waveform, plan)
                self._bytes += waveform.nbytes
            self._memory.move_to_end(key)
            while self._bytes > self.max_bytes and len(self._memory) > 1:
                _, (old, _) = self._memory.popitem(last=False)
                self._bytes -= old.nbytes
        return entry


@dataclass(frozen=True)
class Heard:
    """A rendered utterance for a listener (``RenderCache.heard``): its waveform (read or rendered
    when first asked for) and its features, looked up by the utterance before any audio is."""

    cache: RenderCache
    request: RenderRequest
    sample_rate: int = SAMPLE_RATE

    @property
    def waveform(self) -> np.ndarray:
        return self.cache.waveform(self.request)

    def prosodic_features(self) -> np.ndarray:
        return self.cache.prosodic_features(self.request)

    def pooled_log_mel(self) -> np.ndarray:
        return utterance_pooled_log_mel(
            cache_key(self.cache.renderer, self.request), lambda: self.waveform, SAMPLE_RATE
        )


def disk_cap(max_bytes: int | None = None) -> int:
    """The disk store's cap in bytes: ``max_bytes``, else ``$HEAR_GYM_RENDER_CACHE_MAX_BYTES``
    (bytes, or with a binary K, M, G or T suffix: ``500M``, ``2G``), else 2 GiB."""
    if max_bytes is not None:
        if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 1:
            raise ValueError(f"disk_max_bytes must be an int >= 1, got {max_bytes!r}")
        return max_bytes
    text = os.environ.get(DISK_CAP_ENV, "").strip()
    if not text:
        return DEFAULT_DISK_CAP
    size = re.fullmatch(r"(\d+)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if size is None or int(size[1]) == 0:
        raise ValueError(f"{DISK_CAP_ENV}={text!r}: write a size in bytes above 0, e.g. 2G or 500M")
    return int(size[1]) * _UNITS[size[2].upper()]


@dataclass(frozen=True, order=True)
class _Entry:
    last_use: float
    path: Path
    size: int


class _DiskStore:
    """Checksummed entries in ``folder/<key[:2]>/<key>.f32`` under a byte cap (module docstring)."""

    def __init__(self, folder: Path, max_bytes: int, stats: CacheStats) -> None:
        self.folder, self.max_bytes, self.stats = folder, max_bytes, stats
        self._root = os.fspath(folder)
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes: the last scan plus this process's writes since
        self._written_since_scan = 0

    def path(self, key: str) -> Path:
        return Path(self._path(key))

    def _path(self, key: str) -> str:
        """The entry's path as text: a cache hit builds no ``Path`` objects (a tenth of a warm
        read's time)."""
        return os.path.join(self._root, key[:2], key + _ENTRY_SUFFIX)

    def load(self, key: str) -> tuple[np.ndarray, bytes] | None:
        """(waveform, the BLAKE2b-256 digest of its bytes) of an intact entry, else None."""
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                data = memoryview(fh.read())  # views, not copies, of a ~100 kB entry
        except FileNotFoundError:  # never stored, or evicted (by any process sharing the folder)
            return None
        header = len(MAGIC) + _DIGEST
        body = data[header:]
        digest = hashlib.blake2b(body, digest_size=_DIGEST).digest()
        valid = data[: len(MAGIC)] == MAGIC and len(body) % 4 == 0 and digest == data[len(MAGIC) : header]
        if not valid:
            self.stats.corrupt += 1
            Path(path).unlink(missing_ok=True)
            return None
        try:
            _mark_used(path)
        except OSError:  # evicted meanwhile, or a read-only store: the bytes read are whole
            pass
        return np.frombuffer(body, dtype="<f4"), digest  # read-only over the file's bytes; kept as is

    def store(self, key: str, waveform: np.ndarray) -> bytes:
        """Writes the entry; returns the BLAKE2b-256 digest of the waveform's bytes."""
        body = np.asarray(waveform, dtype="<f4").tobytes()
        digest = hashlib.blake2b(body, digest_size=_DIGEST).digest()
        entry = MAGIC + digest + body
        if len(entry) > self.max_bytes:  # could never fit; memory still holds it
            return digest
        self._make_room(len(entry))
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=_TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(entry)
                fh.flush()
                _mark_used(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        with self._lock:
            self._total += len(entry)
            self._written_since_scan += len(entry)
        return digest

    def _make_room(self, size: int) -> None:
        with self._lock:
            fresh = self._total is not None and self._written_since_scan < (1 - LOW_WATER) * self.max_bytes
            if fresh and self._total + size <= self.max_bytes:
                return
            entries = sorted(self._entries())
            total = sum(e.size for e in entries)
            if total + size > self.max_bytes:
                for entry in entries:  # least recently used first
                    if total + size <= LOW_WATER * self.max_bytes:
                        break
                    entry.path.unlink(missing_ok=True)
                    total -= entry.size
                    self.stats.evicted += 1
            self._total, self._written_since_scan = total, 0

    def _entries(self) -> list[_Entry]:
        """Finished entries now in the folder; temporary files older than ``STALE_TEMP_SECONDS``
        (left by a killed writer) are deleted on the way."""
        found = []
        stale = time.time() - STALE_TEMP_SECONDS
        for shard in _listing(self.folder):
            if not (shard.is_dir(follow_symlinks=False) and len(shard.name) == 2):
                continue
            for item in _listing(Path(shard.path)):
                try:
                    info = item.stat(follow_symlinks=False)
                except FileNotFoundError:  # deleted by another process meanwhile
                    continue
                if item.name.endswith(_ENTRY_SUFFIX) and item.is_file(follow_symlinks=False):
                    found.append(_Entry(info.st_mtime, Path(item.path), info.st_size))
                elif item.name.endswith(_TEMP_SUFFIX) and info.st_mtime < stale:
                    Path(item.path).unlink(missing_ok=True)
        return found


def _mark_used(file: str | Path | int) -> None:
    """Sets an entry's last use (its modification time) to now, to the nanosecond: the kernel's
    own file times are coarser (milliseconds), too coarse to order entries used in a burst."""
    now = time.time_ns()
    os.utime(file, ns=(now, now))


def _listing(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as items:
            return list(items)
    except FileNotFoundError:
        return []


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
