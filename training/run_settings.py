"""What every trainer's settings hold, declared once: the run folder, the seed, W&B and the
progress bars (``RunSettings``); and which of them only say how a run is watched, not what it
trains (``RUN_TIME``), so a run folder resumes whatever they are now.

Each kind of trainer extends it: ``training.ppo.settings.PPOSettings``, and
``training.llm.settings`` for the language-model trainers. The fields after ``out`` are
keyword-only, so a field added to a base never shifts a positional argument of a trainer.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass
from pathlib import Path
from typing import Any

# settings.json keys that say how a run is watched, not what it trains: a folder whose other
# settings match holds the same run, to resume (the language-model trainers add their device)
RUN_TIME = ("progress", "wandb_project")


@dataclass
class RunSettings:
    out: Path  # the run folder
    _: KW_ONLY
    seed: int = 0
    wandb_project: str | None = "hear-gym"  # None: no W&B
    progress: bool = True  # progress bars

    def __post_init__(self) -> None:
        self.out = Path(self.out)

    def to_json(self) -> dict[str, Any]:
        """The settings as ``settings.json`` holds them (paths as strings)."""
        return {**asdict(self), "out": str(self.out)}


def what_is_trained(settings_json: dict[str, Any], run_time: tuple[str, ...] = RUN_TIME) -> dict[str, Any]:
    """``settings_json`` less its ``run_time`` keys: what two runs must share to be one run."""
    return {k: v for k, v in settings_json.items() if k not in run_time}
