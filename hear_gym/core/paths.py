"""Output paths checked before long work, not after it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def writable_file(path: str | Path) -> Path:
    """``path`` as a file that can be written: parent folders are created, and a folder in its
    place or an unwritable location is an ``OSError`` now, before minutes of training."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name, e.g. {path / 'model.safetensors'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
    os.close(handle)
    os.unlink(probe)
    return path
