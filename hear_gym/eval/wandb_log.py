"""Log a finished evaluation to Weights & Biases: config and provenance, and the metrics with
CIs as tables (Hear2Act: every cell and the paired contrasts; VoiceGate: the joint metrics and
the per-condition tables).

Never blocks on login: without an API key in the environment (``WANDB_API_KEY``) the run is
written offline (``WANDB_MODE=offline``) into ``<run folder>/wandb``, to sync later with
``wandb sync``. An explicit ``WANDB_MODE`` in the environment is respected.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def _wandb_run(metadata: dict[str, Any], run_dir: Path, project: str):
    try:
        import wandb
    except ImportError as exc:
        raise RuntimeError("W&B logging needs wandb: pip install 'hear-gym[train]'") from exc
    mode = os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")
    run = wandb.init(project=project, dir=str(run_dir), mode=mode, name=run_dir.name,
                     config={"config": metadata["config"], "provenance": metadata["provenance"]},
                     reinit="finish_previous")
    try:
        yield wandb, run
    finally:
        run.finish()


def log_to_wandb(metadata: dict[str, Any], run_dir: Path, project: str) -> str:
    """A Hear2Act run: every cell's metrics and the paired contrasts. Returns the W&B run folder."""
    with _wandb_run(metadata, run_dir, project) as (wandb, run):
        columns = ["cell", "metric", "point", "low", "high"]
        rows = [[cell, metric, est["point"], est["low"], est["high"]]
                for cell, data in metadata["cells"].items() for metric, est in data["metrics"].items()]
        contrasts = [[c["name"], metric, est["point"], est["low"], est["high"]]
                     for c in metadata["contrasts"] for metric, est in c["metrics"].items()]
        run.log({"cells": wandb.Table(columns=columns, data=rows),
                 "contrasts": wandb.Table(columns=["contrast", *columns[1:]], data=contrasts)})
        for cell, data in metadata["cells"].items():
            for metric, est in data["metrics"].items():
                run.summary[f"{cell}/{metric}"] = est["point"]
        return run.dir


def log_gate_to_wandb(metadata: dict[str, Any], run_dir: Path, project: str) -> str:
    """A VoiceGate run: the joint metrics and every family's condition table."""
    with _wandb_run(metadata, run_dir, project) as (wandb, run):
        metrics = [[name, est["point"], est["low"], est["high"], est["n_scenarios"]]
                   for name, est in metadata["metrics"].items()]
        conditions = [[family, condition, measure, est["point"], est["low"], est["high"]]
                      for family, rows in metadata["conditions"].items() for condition, cells in rows.items()
                      for measure, est in cells.items() if est is not None]
        run.log({"metrics": wandb.Table(columns=["metric", "point", "low", "high", "groups"], data=metrics),
                 "conditions": wandb.Table(columns=["family", "condition", "measure", "point", "low", "high"],
                                           data=conditions)})
        for name, est in metadata["metrics"].items():
            run.summary[name] = est["point"]
        return run.dir
