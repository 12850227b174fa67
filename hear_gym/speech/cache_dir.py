"""Where hear_gym keeps per-user files (eSpeak data overlay, rendered audio)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$HEAR_GYM_CACHE``, else ``$XDG_CACHE_HOME/hear_gym``, else ``~/.cache/hear_gym``."""
    explicit = os.environ.get("HEAR_GYM_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hear_gym"


def render_store() -> Path:
    """The on-disk render store that benchmark jobs share (``RenderCache(disk_dir=...)``), so a
    slow renderer's speech is rendered once for every job that plays the same turns."""
    return cache_root() / "renders"
