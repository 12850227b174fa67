"""Log a finished evaluation to Weights & Biases: config and provenance, every cell's metrics
with CIs as a table, and the paired contrasts.

Never blocks on login: without an API key in the environment (``WANDB_API_KEY``) the run is
written offline (``WANDB_MODE=offline``) into ``<run folder>/wandb``, to sync later with
``wandb sync``. An explicit ``WANDB_MODE`` in the environment is respected.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def log_to_wandb(metadata: dict[str, Any], run_dir: Path, project: str) -> str:
    """Returns the local folder of the W&B run."""
    try:
        import wandb
    except ImportError as exc:
        raise RuntimeError("W&B logging needs wandb: pip install 'hear-gym[train]'") from exc
    mode = os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")
    run = wandb.init(project=project, dir=str(run_dir), mode=mode, name=run_dir.name,
                     config={"config": metadata["config"], "provenance": metadata["provenance"]},
                     reinit="finish_previous")
    try:
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
    finally:
        run.finish()
