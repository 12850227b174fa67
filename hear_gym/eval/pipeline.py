"""Run an evaluation and aggregate it: ``results.jsonl`` in, ``metadata.json`` out, any family.

Both hold the run folder's writer lock (``hear_gym.eval.folder``); ``metadata.json`` is strict
JSON, an undefined aggregate (a mean over zero episodes) written as ``null``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hear_gym.core.registry import family
from hear_gym.core.run_config import RunConfig
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.eval.folder import writing_into
from hear_gym.eval.pool import WorkerPool
from hear_gym.eval.provenance import provenance
from hear_gym.eval.results import CONFIG_FILE, METADATA_FILE, RESULTS_FILE, read_results, undefined_as_null
from hear_gym.eval.runner import AgentFactory, run_evaluation


def evaluate(
    out_dir: str | Path,
    config: RunConfig,
    agents: Mapping[str, AgentFactory],
    progress: bool = True,
    env_objects: Mapping[str, Any] | None = None,
    workers: int = 1,
    backend: str = "processes",
    batch_size: int = 1,
    pool: WorkerPool | None = None,
) -> dict[str, Any]:
    """Play every episode of ``config`` into ``out_dir`` (resuming what is there) and aggregate
    it into ``metadata.json``; returns the metadata. ``agents`` maps each cell's agent name to a
    zero-argument factory (``hear_gym.eval.runner.run_evaluation`` has the other arguments)."""
    out_dir = Path(out_dir)
    with writing_into(out_dir):
        run_evaluation(
            out_dir,
            config,
            agents,
            progress=progress,
            env_objects=env_objects,
            workers=workers,
            backend=backend,
            batch_size=batch_size,
            pool=pool,
        )
        return write_metadata(out_dir)


def read_config(out_dir: Path) -> RunConfig:
    config_path = out_dir / CONFIG_FILE
    if not config_path.exists():
        raise FileNotFoundError(f"{out_dir} is not a hear_gym run folder (no {CONFIG_FILE})")
    try:
        return RunConfig.from_json(json.loads(config_path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{config_path} is not a readable run configuration ({exc})") from None


def write_metadata(out_dir: Path) -> dict[str, Any]:
    """Aggregate ``results.jsonl`` of a finished run into ``metadata.json``; returns it."""
    config = read_config(out_dir)  # before the lock, which would create a missing folder
    with writing_into(out_dir):
        records = read_results(out_dir / RESULTS_FILE, family(config.env_id).renamed_record_fields)
        metadata = {
            "env_id": config.env_id,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "config": config.to_json(),
            "provenance": provenance(config.env_id),
            "n_episodes": len(records),
            **family(config.env_id).summarize(records, config),
        }
        write_json_atomic(out_dir / METADATA_FILE, undefined_as_null(metadata))
    return metadata
