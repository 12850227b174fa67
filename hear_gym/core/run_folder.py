"""Writing into a run folder: one writer at a time, no symlink followed, strict JSON.

Evaluations and training runs append to files in their folder (``results.jsonl``,
``curve.jsonl``, checkpoints). Two processes writing into one folder would interleave those files,
so each run holds an exclusive advisory lock on ``<folder>/.lock`` while it writes. The lock is
released by the operating system when the process ends, however it ends, so a killed run never
leaves a stale lock behind and can always be resumed.

A run folder (and any folder a command writes into: ``listen``'s, ``render``'s, an export's) may be
shared or planted with links, so files in it are never written through a symbolic link: appends open with ``O_NOFOLLOW`` and whole-file writes go to a fresh temporary
file (``O_EXCL``) that is renamed over the target, which replaces a link instead of following it.
JSON is written strictly: ``NaN`` and infinities are refused, since strict parsers reject them.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

LOCK_FILE = ".lock"


class RunFolderBusy(RuntimeError):
    """Another process is writing into the run folder."""


@contextmanager
def run_folder_lock(folder: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``folder`` (created if missing) for the ``with`` block.

    Raises :class:`RunFolderBusy` at once, without waiting, when another process holds it. The
    lock file is opened without following a symbolic link planted in its place."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise RunFolderBusy(f"{folder}: cannot open its lock file {path.name} ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderBusy(
                f"{folder} is in use by another run (it holds {path.name}); "
                f"wait for it to finish or choose another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield folder
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def strict_json(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` that refuses NaN and infinities (``ValueError``) instead of writing them."""
    return json.dumps(obj, allow_nan=False, **kwargs)


def open_append(path: str | Path, binary: bool = False) -> IO:
    """``path`` opened for appending (created if missing), refusing a symbolic link in its place
    with an ``OSError`` that names the file."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise OSError(
            exc.errno, f"{path}: cannot append ({exc.strerror}; a symbolic link is never followed)"
        ) from None
    return os.fdopen(fd, "ab" if binary else "a", **({} if binary else {"encoding": "utf-8"}))


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once: readers see the old or the new file, never part
    of one, and a symbolic link at ``path`` is replaced, not followed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_wav_atomic(path: str | Path, waveform: Any, sample_rate: int) -> None:
    """``waveform`` as a 16-bit PCM WAV at ``path``, written atomically (see above)."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, waveform, sample_rate, subtype="PCM_16", format="WAV")
    write_bytes_atomic(path, buffer.getvalue())


def write_figure_atomic(figure: Any, path: str | Path, **savefig: Any) -> None:
    """A Matplotlib ``figure`` saved at ``path`` (its format from the suffix), written atomically."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=Path(path).suffix.lstrip(".") or "png", **savefig)
    write_bytes_atomic(path, buffer.getvalue())


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """``obj`` as strict, indented JSON at ``path``, written atomically (see above)."""
    write_text_atomic(path, strict_json(obj, indent=2) + "\n")


__all__ = [
    "LOCK_FILE",
    "RunFolderBusy",
    "open_append",
    "run_folder_lock",
    "strict_json",
    "write_bytes_atomic",
    "write_figure_atomic",
    "write_json_atomic",
    "write_text_atomic",
    "write_wav_atomic",
]
