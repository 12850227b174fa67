"""One OpenEnv manifest (``openenv.yaml``) per registered env, generated from the registry.

The manifests ship in ``manifests/<family>/openenv.yaml`` beside this module; a test regenerates
them and fails when they differ (``python -m hear_gym.integrations.openenv.manifest`` writes them
anew). Each names the env's ASGI app (``hear_gym.integrations.openenv.apps:<family>``, the env
served as ``hear-gym serve --env ID`` serves it with its defaults) and declares what OpenEnv reads
from the Environment class: whether sessions may run concurrently.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

from hear_gym.core.registry import env_ids, family
from hear_gym.integrations.openenv.server import HearGymEnvironment

MANIFEST_ROOT = Path(__file__).parent / "manifests"
SPEC_VERSION = 1  # the openenv.yaml format OpenEnv's env template writes
DEFAULT_PORT = 8000


def manifest(env_id: str) -> dict[str, Any]:
    env_family = family(env_id)
    return {
        "spec_version": SPEC_VERSION,
        "name": env_family.name,
        "version": version("hear-gym"),
        "description": f"hear_gym {env_id}: served with `hear-gym serve --env {env_id}`",
        "type": "space",
        "runtime": "fastapi",
        "app": f"hear_gym.integrations.openenv.apps:{env_family.name}",
        "port": DEFAULT_PORT,
        "env_id": env_id,
        "access_conditions": list(env_family.access_conditions),
        "action_formats": list(env_family.action_formats),
        "supports_concurrent_sessions": HearGymEnvironment.SUPPORTS_CONCURRENT_SESSIONS,
    }


def manifest_text(env_id: str) -> str:
    return yaml.safe_dump(manifest(env_id), sort_keys=False)


def manifest_path(env_id: str, root: Path = MANIFEST_ROOT) -> Path:
    return root / family(env_id).name / "openenv.yaml"


def write_manifests(root: Path = MANIFEST_ROOT) -> list[Path]:
    """Write every registered env's manifest under ``root``; returns the paths."""
    paths = []
    for env_id in env_ids():
        path = manifest_path(env_id, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(manifest_text(env_id), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_manifests():
        print(written)
