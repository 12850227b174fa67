"""One evaluation end to end: run (or resume) the episodes, aggregate, write metadata.json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hear_gym.eval.provenance import provenance
from hear_gym.envs.hear2act.report import summarize
from hear_gym.eval.results import CONFIG_FILE, METADATA_FILE, RESULTS_FILE, read_results, write_json_atomic
from hear_gym.eval.runner import AgentFactory, RunConfig, run_evaluation


def evaluate(out_dir: Path, config: RunConfig, agents: Mapping[str, AgentFactory],
             progress: bool = True, env_kwargs: Mapping[str, Any] | None = None,
             workers: int = 1, backend: str = "processes", batch_size: int = 1) -> dict[str, Any]:
    run_evaluation(out_dir, config, agents, progress=progress, env_kwargs=env_kwargs, workers=workers,
                   backend=backend, batch_size=batch_size)
    return write_metadata(out_dir)


def write_metadata(out_dir: Path) -> dict[str, Any]:
    """Aggregate ``results.jsonl`` of a finished run into ``metadata.json``; returns it."""
    config_path = out_dir / CONFIG_FILE
    if not config_path.exists():
        raise FileNotFoundError(f"{out_dir} is not a hear_gym run folder (no {CONFIG_FILE})")
    config = RunConfig.from_json(json.loads(config_path.read_text(encoding="utf-8")))
    records = read_results(out_dir / RESULTS_FILE)
    metadata = {
        "env_id": "hear_gym/Hear2Act-v0",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": config.to_json(),
        "provenance": provenance(),
        "n_episodes": len(records),
        **summarize(records, config),
    }
    write_json_atomic(out_dir / METADATA_FILE, metadata)
    return metadata
