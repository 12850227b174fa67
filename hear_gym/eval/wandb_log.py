"""Log a finished evaluation to Weights & Biases, for any family: config and provenance, the
family's tables (the same ones the console and Markdown show) and every cell's metric points as
summary scalars (``<cell>/<metric>``).

Never blocks on login: without an API key in the environment (``WANDB_API_KEY``) the run is
written offline into ``<run folder>/wandb``, to sync later with ``wandb sync``. Offline means no
network at all: the SDK is configured through its environment before it starts (its error
reporting and cloud-metadata probes would otherwise still call out). Online, a wrong key or an
unreachable server fails within ``WANDB_INIT_TIMEOUT`` seconds (default 20) with one line. An
explicit ``WANDB_*`` setting in the environment is always respected.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hear_gym.core.registry import family
from hear_gym.core.tables import rows
from hear_gym.eval.folder import writing_into
from hear_gym.stats.bootstrap import flat_estimates

# every run: no Weave probe (the top-level package ``agents`` makes W&B print "Detected [agents]
# in use" into every log), no git commands in the user's checkout (provenance records the commit)
_ALWAYS = {"WANDB_DISABLE_WEAVE": "true", "WANDB_DISABLE_GIT": "true"}
_OFFLINE = {
    "WANDB_MODE": "offline",
    "WANDB_ERROR_REPORTING": "false",  # the SDK's error reporting posts over HTTPS even offline
    "WANDB__DISABLE_MACHINE_INFO": "true",  # cloud metadata probes (169.254.169.254)
}
_ONLINE = {"WANDB_INIT_TIMEOUT": "20"}  # the SDK waits 90 s for a server that does not answer


class WandbStartError(RuntimeError):
    """A W&B run could not be started (wrong key, no server, a link where its folder goes)."""


def _sdk_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``WANDB_*`` settings a run starts with, given the environment: offline unless an API
    key or an explicit ``WANDB_MODE`` says otherwise; values already set are kept."""
    mode = environ.get("WANDB_MODE") or ("online" if environ.get("WANDB_API_KEY") else "offline")
    defaults = {**_ALWAYS, **(_OFFLINE if mode in ("offline", "dryrun") else _ONLINE), "WANDB_MODE": mode}
    return {key: environ.get(key) or value for key, value in defaults.items()}


@contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_run(config: dict[str, Any], run_dir: Path, project: str):
    """A W&B run writing into ``run_dir/wandb``: online only with ``WANDB_API_KEY`` set (or an
    explicit ``WANDB_MODE``), never asking to log in. Trainers log their curves through it too.
    Raises ``WandbStartError`` with one line when the run cannot start."""
    folder = run_dir / "wandb"
    if folder.is_symlink():
        raise WandbStartError(f"{folder} is a symbolic link; W&B writes only into a real folder there")
    settings = _sdk_environment(os.environ)
    with _environment(settings):  # read by the SDK as it imports, starts its service and the run
        try:
            import wandb
        except ImportError as exc:
            raise RuntimeError("W&B logging needs wandb: pip install 'hear-gym[train]'") from exc
        try:
            return wandb.init(
                project=project, dir=str(run_dir), name=run_dir.name, config=config, reinit="finish_previous"
            )
        except wandb.errors.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise WandbStartError(
                f"W&B could not start the {settings['WANDB_MODE']} run in project {project!r}: {reason} "
                "(check WANDB_API_KEY and WANDB_BASE_URL, or unset WANDB_API_KEY to log offline)"
            ) from None


@contextmanager
def _wandb_run(metadata: dict[str, Any], run_dir: Path, project: str):
    import wandb

    run = start_run({"config": metadata["config"], "provenance": metadata["provenance"]}, run_dir, project)
    try:
        yield wandb, run
    finally:
        run.finish()


def log_to_wandb(metadata: dict[str, Any], run_dir: Path, project: str) -> str:
    """Log a run's metadata; returns the W&B run folder. Holds the run folder's writer lock."""
    tables = family(metadata["env_id"]).tables(metadata)
    with writing_into(run_dir), _wandb_run(metadata, run_dir, project) as (wandb, run):
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
