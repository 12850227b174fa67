"""Provenance recorded with every evaluation: code version, package versions, machine."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

from hear_gym.core.registry import family

_PACKAGES = ("hear-gym", "gymnasium", "numpy", "scipy", "pydantic")
# The model stack, recorded where installed: a transformers release changed how tool calls are
# parsed from generated ids, and a run's numbers can move with any of these.
_MODEL_PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "trl",
    "peft",
    "accelerate",
    "stable-baselines3",
    "sb3-contrib",
)


def git_commit() -> str | None:
    """The commit of the checkout hear_gym runs from (with '-dirty' if it has changes). Git runs
    without optional locks: ``git status`` would otherwise take the checkout's ``index.lock`` and
    could make the user's own git command in that checkout fail meanwhile."""
    git = ["git", "--no-optional-locks", "-C", str(Path(__file__).resolve().parents[2])]
    try:
        commit = subprocess.run(
            [*git, "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")


def file_fingerprint(path: Path) -> str:
    """``name@sha256:<16 hex>``: how a run records a plug-in file (a probe checkpoint) it used."""
    path = Path(path)
    return f"{path.name}@sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_versions() -> dict[str, str | None]:
    """The core packages' versions (None where missing) and the model stack's where installed."""
    versions = {"python": sys.version.split()[0], **{name: _installed_version(name) for name in _PACKAGES}}
    model_stack = {name: _installed_version(name) for name in _MODEL_PACKAGES}
    return {**versions, **{name: v for name, v in model_stack.items() if v is not None}}


def provenance(env_id: str) -> dict:
    kept = _code_and_machine()
    return {
        **kept,
        "packages": dict(kept["packages"]),  # a copy: callers own what they get
        "env_id": env_id,
        "generator": family(env_id).generator_version,
    }


@cache
def _code_and_machine() -> dict:
    """Read once per process: the code a process runs is what it imported, and a grid writes a
    run's metadata several times (two git commands and ~15 package look-ups each)."""
    return {"git_commit": git_commit(), "packages": package_versions(), "platform": platform.platform()}
