"""What a PPO run folder holds before ``training.ppo.train.train`` writes into it: nothing, this run
finished (reused), this run interrupted (resumed, sb3) or another run (refused, never
overwritten); and the settings and curve of a run that starts or resumes there."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hear_gym.core.run_folder import write_json_atomic
from training.curve_rows import clear_after, kept_rows, read_rows
from training.ppo.curve import CURVE_FILE
from training.ppo.resume import latest_resume_state, resume_step
from training.run_settings import what_is_trained

if TYPE_CHECKING:
    from training.ppo.settings import PPOSettings

SETTINGS_FILE = "settings.json"


# settings added since the first runs whose default is not how those runs trained
BEFORE_ADDED = {"normalize_observation": False}


def _saved_settings(path: Path, settings_class: type) -> dict[str, Any]:
    """A run's settings.json; a setting added since it was written reads as it behaved then: its
    default (``backend``, ``env_runners``, ``train_env_options``) or its ``BEFORE_ADDED`` value."""
    defaults = {f.name: f.default for f in fields(settings_class) if f.default is not MISSING}
    defaults |= {
        f.name: f.default_factory() for f in fields(settings_class) if f.default_factory is not MISSING
    }
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}); choose a new folder"
        ) from None
    return {**defaults, **BEFORE_ADDED, **saved}


def prior_run(settings: PPOSettings) -> dict[str, Any] | None:
    """What ``settings.out`` holds: ``None`` (no run), ``{"finished": result}`` (this run, done)
    or ``{"resume": True}`` (this run, interrupted; sb3 resumes it). Another run there, or an
    interrupted one of a backend that cannot resume, is refused (never overwritten)."""
    curve, saved = settings.out / CURVE_FILE, settings.out / SETTINGS_FILE
    if not (curve.exists() or saved.exists()):
        return None
    same = saved.exists() and what_is_trained(_saved_settings(saved, type(settings))) == what_is_trained(
        settings.to_json()
    )
    final = [
        r for r in read_rows(curve) if r["kind"] == "eval" and r.get("checkpoint") == "checkpoints/final"
    ]
    if not same or not (final or settings.backend == "sb3"):
        raise FileExistsError(
            f"{settings.out} already holds a {'different' if not same else 'unfinished'} training run; "
            "choose a new folder"
        )
    if not final:
        return {"resume": True}
    return {
        "finished": {
            "checkpoint": str(settings.out / final[-1]["checkpoint"]),
            "evaluation": str(settings.out / "evals" / "final"),
            "metrics": final[-1]["metrics"],
            "reused": True,
        }
    }


def start_or_resume(settings: PPOSettings, resuming: bool) -> None:
    """Write the settings and prepare the curve: empty for a new run; for an interrupted one,
    only its rows up to the last resume point (a torn last line goes), and none of the
    checkpoints and evaluations made after it (they are made again)."""
    step = resume_step(latest_resume_state(settings.out)) if resuming else 0
    if resuming:
        clear_after(settings.out, step, ("checkpoints", "evals"))
    write_json_atomic(settings.out / SETTINGS_FILE, settings.to_json())
    kept_rows(settings.out / CURVE_FILE, lambda row: row["step"] <= step)
