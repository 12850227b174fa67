"""Log a finished evaluation to Weights & Biases, for any family: config and provenance, the
family's tables (the same ones the console and Markdown show) and every cell's metric points as
summary scalars (``<cell>/<metric>``).

Never blocks on login: without an API key in the environment (``WANDB_API_KEY``) the run is
written offline (``WANDB_MODE=offline``) into ``<run folder>/wandb``, to sync later with
``wandb sync``. An explicit ``WANDB_MODE`` in the environment is respected.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hear_gym.core.registry import family
from hear_gym.core.tables import rows
from hear_gym.stats.bootstrap import flat_estimates


def start_run(config: dict[str, Any], run_dir: Path, project: str):
    """A W&B run writing into ``run_dir/wandb``: online only with ``WANDB_API_KEY`` set (or an
    explicit ``WANDB_MODE``), never asking to log in. Trainers log their curves through it too."""
    try:
        import wandb
    except ImportError as exc:
        raise RuntimeError("W&B logging needs wandb: pip install 'hear-gym[train]'") from exc
    mode = os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")
    return wandb.init(
        project=project,
        dir=str(run_dir),
        mode=mode,
        name=run_dir.name,
        config=config,
        reinit="finish_previous",
    )


@contextmanager
def _wandb_run(metadata: dict[str, Any], run_dir: Path, project: str):
    import wandb

    run = start_run({"config": metadata["config"], "provenance": metadata["provenance"]}, run_dir, project)
    try:
        yield wandb, run
    finally:
        run.finish()


def log_to_wandb(metadata: dict[str, Any], run_dir: Path, project: str) -> str:
    """Log a run's metadata; returns the W&B run folder."""
    tables = family(metadata["env_id"]).tables(metadata)
    with _wandb_run(metadata, run_dir, project) as (wandb, run):
        run.log(
            {
                _key(table.title or f"table_{i}"): wandb.Table(
                    columns=[str(c.header) for c in table.columns], data=rows(table)
                )
                for i, table in enumerate(tables)
            }
        )
        for cell, data in metadata["cells"].items():
            for metric, est in flat_estimates(data["metrics"]).items():
                run.summary[f"{cell}/{metric}"] = est["point"]
        return run.dir


def _key(title: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "@+/^-" else "_" for ch in str(title))[:120]
