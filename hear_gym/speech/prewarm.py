"""Render a list of utterances ahead of use, in parallel across processes: the audio into a disk
render cache (``RenderCache``'s store), their prosodic features into the feature store
(``hear_gym.speech.features``, under each utterance's key, so a feature observation needs no audio
for them). What ``hear-gym render`` runs once a family has planned what its users will say.

``estimate`` says what a plan will cost on disk before anything is rendered: the audio's size from
each utterance's words at its plan's speaking rate, pauses and lead silence (float32 at 16 kHz, as
the store keeps it), and the feature rows'. Work goes to ``workers`` spawned processes in chunks
(eSpeak holds process state; each process has its own engine); every chunk is written by the
process that rendered it, and a chunk already done (audio on disk, features stored) costs only
the look-ups, so an interrupted prewarm resumes by running again.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hear_gym.speech.cache import MAGIC, RenderCache, disk_cap
from hear_gym.speech.features import N_FEATURES
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest, make_renderer

CHUNK = 48  # utterances per task: a few seconds of work, so the bar moves and the cores stay even
# A stored feature row: its key (kind, 32-byte digest or request key, rate), the float32 vector, its
# 16-byte check, and SQLite's page and index overhead, measured on a filled store (~2x the data)
FEATURE_ROW_BYTES = 2 * (48 + 4 * N_FEATURES + 16)
_CLAUSE_BREAK = re.compile(r"[,;:.!?\u3002\uff1f\uff01\uff0c]\s+\S")


@dataclass(frozen=True)
class Estimate:
    utterances: int
    audio_seconds: float
    audio_bytes: int  # the disk render store's entries
    feature_bytes: int  # two feature rows per utterance (by its request, by its audio)

    def describe(self, keep_audio: bool, features: bool) -> str:
        parts = [f"{self.utterances:,} utterances, about {self.audio_seconds / 3600:.1f} h of speech"]
        if keep_audio:
            parts.append(f"about {_size(self.audio_bytes)} of audio")
        if features:
            parts.append(f"about {_size(self.feature_bytes)} of features")
        return ", ".join(parts)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def spoken_seconds(request: RenderRequest) -> float:
    """About how long ``request`` renders: its words at its plan's rate (words per minute), its
    clause pauses and lead silence."""
    plan = request.plan()
    words = len(request.text.split()) if request.language == "en" else len(request.text) / 2.5
    clauses = len(_CLAUSE_BREAK.findall(request.text.strip()))
    return (plan.lead_pause_ms + clauses * plan.clause_pause_ms) / 1000 + 60.0 * words / plan.rate


def estimate(requests: Sequence[RenderRequest]) -> Estimate:
    seconds = sum(spoken_seconds(r) for r in requests)
    header = len(MAGIC) + 32
    return Estimate(
        utterances=len(requests),
        audio_seconds=seconds,
        audio_bytes=int(seconds * SAMPLE_RATE * 4 + header * len(requests)),
        feature_bytes=FEATURE_ROW_BYTES * 2 * len(requests),
    )


def cap_warning(estimate: Estimate, cache_dir: Path) -> str | None:
    """A line when the audio would not fit under the disk store's cap (the prewarm would evict
    its own first entries), else None."""
    cap = disk_cap()
    if estimate.audio_bytes <= cap:
        return None
    return (
        f"the audio ({_size(estimate.audio_bytes)}) is more than the disk cache's cap ({_size(cap)}) in "
        f"{cache_dir}: the first utterances would be evicted again; raise the cap with "
        f"HEAR_GYM_RENDER_CACHE_MAX_BYTES, or keep only the features (--no-audio)"
    )


@dataclass
class Tally:
    rendered: int = 0  # synthesized here
    already_rendered: int = 0  # audio kept: found in the disk store
    measured: int = 0  # features stored under the utterance here (read off its audio)

    def add(self, other: Tally) -> None:
        self.rendered += other.rendered
        self.already_rendered += other.already_rendered
        self.measured += other.measured


def prewarm(
    requests: Sequence[RenderRequest],
    renderer: str,
    cache_dir: Path | None,
    workers: int | None = None,
    features: bool = True,
    progress: bool = True,
    description: str = "rendering",
) -> Tally:
    """Render ``requests`` into ``cache_dir``'s store (None: keep no audio) and, with ``features``,
    store their prosodic features, in ``workers`` processes (default: one per core)."""
    if cache_dir is None and not features:
        raise ValueError("nothing to keep: pass a cache folder for the audio, or features=True")
    make_renderer(renderer)  # an unknown renderer fails here, not in every worker
    workers = max(1, min(workers or os.cpu_count() or 1, len(requests)))
    size = max(1, min(CHUNK, -(-len(requests) // workers)))  # a small plan still uses every worker
    chunks = [tuple(requests[i : i + size]) for i in range(0, len(requests), size)]
    total = Tally()
    with _bar(progress) as bar:
        task = bar.add_task(description, total=len(requests))
        if workers == 1:
            for chunk in chunks:
                total.add(_prewarm_chunk(renderer, cache_dir, features, chunk))
                bar.advance(task, len(chunk))
            return total
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
        ) as pool:
            pending = {pool.submit(_prewarm_chunk, renderer, cache_dir, features, c): len(c) for c in chunks}
            for done in as_completed(pending):
                total.add(done.result())
                bar.advance(task, pending[done])
    return total


def _bar(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
    )


def _start_worker(parent_pid: int) -> None:
    from hear_gym.eval.process import die_with_parent

    die_with_parent(parent_pid)


_CACHES: dict[tuple[str, str | None], RenderCache] = {}


def _prewarm_chunk(
    renderer: str, cache_dir: Path | None, features: bool, requests: Iterable[RenderRequest]
) -> Tally:
    key = (renderer, None if cache_dir is None else str(cache_dir))
    cache = _CACHES.get(key)
    if cache is None:  # a small memory: each utterance is asked for once
        cache = _CACHES[key] = RenderCache(make_renderer(renderer), max_bytes=16 * 2**20, disk_dir=cache_dir)
    stats = cache.stats
    tally = Tally()
    renders = stats.renders
    for request in requests:
        if cache_dir is not None:
            cache.waveform(request)  # on disk whether or not its features are stored
            tally.already_rendered += stats.renders == renders
        if features:
            asked = stats.renders + stats.disk_hits + stats.memory_hits
            cache.prosodic_features(request)  # asks for the audio only when they are not stored
            tally.measured += stats.renders + stats.disk_hits + stats.memory_hits > asked
        tally.rendered += stats.renders - renders
        renders = stats.renders
    return tally


__all__ = ["Estimate", "Tally", "cap_warning", "estimate", "prewarm", "spoken_seconds"]
