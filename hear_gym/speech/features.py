"""Prosodic features of an utterance (Praat via parselmouth) and log-mel frames.

``prosodic_features`` returns a fixed-order float32 vector (``FEATURE_NAMES``): F0 statistics and
contour slopes in semitones re 100 Hz (Praat pitch, floor 50 Hz, ceiling 500 Hz), energy in dB,
pause structure and a voiced-segment rate (a syllable-rate proxy). Results are cached by the
waveform's hash: in memory, and on disk in ``<cache root>/features-v2.sqlite3`` (shared by
processes; Praat's pitch analysis is most of the cost of an audio turn once the audio itself is
cached). Every stored row carries a keyed checksum: a damaged row is recomputed and replaced, and
a damaged store is ignored with a warning, never trusted. ``pooled_log_mel`` (the
mean and standard deviation of the log-mel frames) is cached the same way.

A clip's content key is the BLAKE2b-256 digest of its float32 bytes (with the sample rate).
Hashing a clip costs about as much as a cache lookup saves, so the key of a *read-only* array
(what ``RenderCache`` hands out: shared, never modified) is remembered per array object while it
lives, and the render cache hands over the digest it checks its disk entries with
(``remember_digest``); writable arrays are hashed on every call.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from hear_gym.speech.cache_dir import cache_root

PITCH_FLOOR_HZ = 50.0
PITCH_CEILING_HZ = 500.0
FRAME_S = 0.01
SILENCE_BELOW_PEAK_DB = 25.0
FINAL_WINDOW_S = 0.4
# Praat's intensity analysis needs a window of 6.4 periods of the pitch floor; shorter clips get zeros.
MIN_DURATION_S = 6.4 / PITCH_FLOOR_HZ

FEATURE_NAMES: tuple[str, ...] = (
    "duration_s",  # from first to last speech frame
    "lead_silence_s",  # silence before the first speech frame
    "f0_mean_st",
    "f0_std_st",
    "f0_range_st",  # 95th - 5th percentile
    "f0_slope_st_per_s",  # linear trend over the utterance
    "f0_final_slope_st_per_s",  # trend over the last voiced 0.4 s
    "voiced_fraction",
    "energy_mean_db",
    "energy_std_db",
    "pause_ratio",  # share of the speech span below peak - 25 dB
    "voiced_segments_per_s",
)
N_FEATURES = len(FEATURE_NAMES)
N_MELS = 64

_CACHE: OrderedDict[bytes, np.ndarray] = OrderedDict()
_CACHE_SIZE = 8192
_LOCK = threading.Lock()
_STORE_NAME = "features-v3.sqlite3"  # bump with any change to FEATURE_NAMES, their computation or keys
_CHECK_BYTES = 16  # a keyed BLAKE2b of each stored row: damaged rows are recomputed, never served
_store: tuple[int, str, sqlite3.Connection | None] | None = None  # (pid, path, connection)


def _disk() -> sqlite3.Connection | None:
    """This process's connection to the feature store (reopened after fork or a new cache root)."""
    global _store
    path = _store_path(os.environ.get("HEAR_GYM_CACHE"), os.environ.get("XDG_CACHE_HOME"))
    if _store is None or _store[0] != os.getpid() or _store[1] != path:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
            connection.execute("CREATE TABLE IF NOT EXISTS features (key BLOB PRIMARY KEY, value BLOB)")
        except (OSError, sqlite3.Error) as exc:
            warnings.warn(f"feature store {path} unusable ({exc}); features are recomputed", stacklevel=3)
            connection = None
        else:
            _no_sync_per_row(connection)
        _store = (os.getpid(), path, connection)
    return _store[2]


@lru_cache(maxsize=8)
def _store_path(explicit: str | None, xdg: str | None) -> str:
    """The store's path for these settings of the variables ``cache_root`` reads (a path built
    at every look-up cost more than the look-up)."""
    return str(cache_root() / _STORE_NAME)


def _no_sync_per_row(connection: sqlite3.Connection) -> None:
    """Write-ahead log, synced at checkpoints only: by default every stored row is a commit with
    several fsyncs (most of a cold grid pass's feature time on a busy disk). The store is a
    cache whose rows carry checks, so losing the last rows to a power cut only costs their
    recomputation. Refused (a read-only store), the defaults stay."""
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error:
        pass


def _check(key: bytes, value: bytes) -> bytes:
    return hashlib.blake2b(value, key=key[:64], digest_size=_CHECK_BYTES).digest()


def _disk_get(key: bytes, length: int = N_FEATURES) -> np.ndarray | None:
    """The stored row for ``key`` if it is intact; a damaged row reads as missing."""
    connection = _disk()
    if connection is None:
        return None
    try:
        row = connection.execute("SELECT value FROM features WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    value, check = row[0][:-_CHECK_BYTES], row[0][-_CHECK_BYTES:]
    if len(value) != 4 * length or _check(key, value) != check:
        return None
    return np.frombuffer(value, dtype="<f4").copy()


def _disk_put(key: bytes, features: np.ndarray) -> None:
    """Store (or replace a damaged) row, with its check."""
    connection = _disk()
    if connection is None:
        return
    value = features.astype("<f4").tobytes()
    try:
        with connection:
            connection.execute(
                "INSERT OR REPLACE INTO features VALUES (?, ?)", (key, value + _check(key, value))
            )
    except sqlite3.Error:
        pass  # a busy or read-only store only costs a recomputation


def _slope(t: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(t, y, 1)[0]) if len(t) >= 3 and np.ptp(t) > 0 else 0.0


def _compute(waveform: np.ndarray, sample_rate: int) -> np.ndarray:
    import parselmouth

    sound = parselmouth.Sound(waveform.astype(np.float64), sampling_frequency=sample_rate)
    if sound.duration < MIN_DURATION_S:
        return np.zeros(N_FEATURES, dtype=np.float32)
    intensity = sound.to_intensity(minimum_pitch=PITCH_FLOOR_HZ, time_step=FRAME_S)
    db = intensity.values[0]
    db = np.maximum(db, db.max() - 60.0)  # Praat reports digital silence as about -300 dB
    t_db = intensity.xs()
    loud = db > db.max() - SILENCE_BELOW_PEAK_DB
    if not loud.any():
        return np.zeros(N_FEATURES, dtype=np.float32)
    first, last = np.flatnonzero(loud)[[0, -1]]
    span = slice(first, last + 1)
    pitch = sound.to_pitch(time_step=FRAME_S, pitch_floor=PITCH_FLOOR_HZ, pitch_ceiling=PITCH_CEILING_HZ)
    f0 = pitch.selected_array["frequency"]
    t_f0 = pitch.xs()
    voiced = f0 > 0
    duration = float(t_db[last] - t_db[first] + FRAME_S)
    segments = int(np.count_nonzero(np.diff(voiced.astype(np.int8)) == 1) + int(voiced[:1].any()))
    pitch_stats = [0.0] * 5
    if voiced.sum() >= 3:
        st = 12 * np.log2(f0[voiced] / 100.0)
        t_v = t_f0[voiced]
        final = t_v >= t_v[-1] - FINAL_WINDOW_S
        pitch_stats = [
            float(st.mean()),
            float(st.std()),
            float(np.percentile(st, 95) - np.percentile(st, 5)),
            _slope(t_v, st),
            _slope(t_v[final], st[final]),
        ]
    features = [
        duration,
        float(t_db[first]),
        *pitch_stats,
        float(voiced.mean()),
        float(db[span].mean()),
        float(db[span].std()),
        float(1.0 - loud[span].mean()),
        segments / duration,
    ]
    return np.asarray(features, dtype=np.float32)


def _content_key(waveform: np.ndarray, sample_rate: int, kind: bytes) -> bytes:
    frozen = not waveform.flags.writeable
    digest = _remembered(waveform) if frozen else None
    if digest is None:
        digest = hashlib.blake2b(memoryview(waveform).cast("B"), digest_size=_DIGEST_BYTES).digest()
        if frozen:
            _remember(waveform, digest)
    return kind + digest + sample_rate.to_bytes(4, "little")


def remember_digest(waveform: np.ndarray, digest: bytes) -> None:
    """Take ``digest``, the BLAKE2b-256 digest of ``waveform``'s bytes that its owner computed
    anyway (the render cache checks its disk entries with it), as the clip's content key while
    the array lives. Only read-only float32 arrays in C order qualify: nobody can change them
    under the key, and they are the arrays the features read as they are."""
    if len(digest) == _DIGEST_BYTES and _as_read(waveform) and not waveform.flags.writeable:
        _remember(waveform, digest)


def _as_read(waveform: np.ndarray) -> bool:
    return waveform.dtype == np.float32 and waveform.flags.c_contiguous


def _remembered(waveform: np.ndarray) -> bytes | None:
    entry = _KEYS_BY_OBJECT.get(id(waveform))
    return entry[1] if entry is not None and entry[0]() is waveform else None


def _remember(waveform: np.ndarray, digest: bytes) -> None:
    ident = id(waveform)
    _KEYS_BY_OBJECT[ident] = (weakref.ref(waveform, lambda _, i=ident: _KEYS_BY_OBJECT.pop(i, None)), digest)


_DIGEST_BYTES = 32
_KEYS_BY_OBJECT: dict[int, tuple[weakref.ref, bytes]] = {}


def _memory_get(key: bytes) -> np.ndarray | None:
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
        return cached


def _memory_put(key: bytes, features: np.ndarray) -> np.ndarray:
    features.flags.writeable = False
    with _LOCK:
        _CACHE[key] = features
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return features


def prosodic_features(waveform: np.ndarray, sample_rate: int = 16_000) -> np.ndarray:
    """The ``FEATURE_NAMES`` vector of one utterance (read-only, cached by content)."""
    waveform = np.ascontiguousarray(waveform, dtype=np.float32)
    key = _content_key(waveform, sample_rate, b"")
    cached = _memory_get(key)
    if cached is not None:
        return cached
    features = _disk_get(key)
    if features is None:
        features = _compute(waveform, sample_rate)
        _disk_put(key, features)
    return _memory_put(key, features)


def utterance_prosodic_features(
    utterance: str, waveform: Callable[[], np.ndarray], sample_rate: int = 16_000
) -> np.ndarray:
    """``prosodic_features`` of a rendered utterance, looked up by ``utterance``, the render
    cache's key of its request (renderer name and version and every request field: a request
    renders to the same samples every time), before any audio is read: a turn measured once,
    in any process (``hear-gym render`` measures a split's turns ahead), needs no audio again.
    ``waveform()`` gives the clip on a miss; its row is then kept under both keys."""
    return _by_utterance(b"utterance", utterance, waveform, sample_rate, prosodic_features, N_FEATURES)


def utterance_pooled_log_mel(
    utterance: str, waveform: Callable[[], np.ndarray], sample_rate: int = 16_000
) -> np.ndarray:
    """``pooled_log_mel`` of a rendered utterance, looked up as ``utterance_prosodic_features``."""
    return _by_utterance(b"utterance-logmel", utterance, waveform, sample_rate, pooled_log_mel, 2 * N_MELS)


def _by_utterance(
    kind: bytes, utterance: str, waveform, sample_rate: int, measure, length: int
) -> np.ndarray:
    key = kind + bytes.fromhex(utterance) + sample_rate.to_bytes(4, "little")
    cached = _memory_get(key)
    if cached is not None:
        return cached
    features = _disk_get(key, length)
    if features is None:
        features = measure(waveform(), sample_rate)
        _disk_put(key, features)
    return _memory_put(key, features)


def pooled_log_mel(waveform: np.ndarray, sample_rate: int = 16_000) -> np.ndarray:
    """Mean and standard deviation over frames of ``log_mel`` (read-only, cached by content)."""
    waveform = np.ascontiguousarray(waveform, dtype=np.float32)
    key = _content_key(waveform, sample_rate, b"logmel")
    cached = _memory_get(key)
    if cached is not None:
        return cached
    features = _disk_get(key, 2 * N_MELS)
    if features is None:
        mel = log_mel(waveform, sample_rate, N_MELS)
        features = np.concatenate([mel.mean(axis=0), mel.std(axis=0)]).astype(np.float32)
        _disk_put(key, features)
    return _memory_put(key, features)


@lru_cache(maxsize=8)
def _mel_filters(sample_rate: int, n_fft: int, n_mels: int) -> np.ndarray:
    import librosa

    return librosa.filters.mel(sr=sample_rate, n_fft=n_fft, n_mels=n_mels).T.copy()


@lru_cache(maxsize=8)
def _window(n_fft: int) -> np.ndarray:
    return np.hanning(n_fft + 2)[1:-1]


def log_mel(
    waveform: np.ndarray,
    sample_rate: int = 16_000,
    n_mels: int = N_MELS,
    win_ms: float = 25.0,
    hop_ms: float = 10.0,
) -> np.ndarray:
    """Log-mel frames, shape (frames, n_mels): Hann-windowed power STFT through librosa's mel
    filterbank (Slaney), natural log with a 1e-10 floor."""
    n_fft = int(round(sample_rate * win_ms / 1000))
    hop = int(round(sample_rate * hop_ms / 1000))
    x = np.asarray(waveform, dtype=np.float64)
    if len(x) < n_fft:
        x = np.pad(x, (0, n_fft - len(x)))
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop]
    power = np.abs(np.fft.rfft(frames * _window(n_fft), axis=1)) ** 2
    return np.log(power @ _mel_filters(sample_rate, n_fft, n_mels) + 1e-10).astype(np.float32)
