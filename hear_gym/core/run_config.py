"""What an evaluation run plays, as data: ``Cell`` (an agent under an access condition, plus the
family's per-cell options) and ``RunConfig`` (cells x episodes x rollouts, seeds, env kwargs).
Part of the family contract: families build them, the runner plays them, ``run_config.json``
stores them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hear_gym.core.registry import family


@dataclass(frozen=True)
class Cell:
    """One evaluated condition: an agent under an access condition, plus the values of the
    family's per-cell options (Hear2Act: the feedback realization), in the family's order."""

    agent: str
    access: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.agent}@{self.access}" + "".join(f"/{value}" for _, value in self.options)

    def option(self, key: str) -> str:
        return dict(self.options)[key]

    @classmethod
    def from_spec(cls, spec: str, default_access: str, options: tuple[tuple[str, str], ...] = ()) -> Cell:
        """A command-line ``--cell``: ``agent`` or ``agent@ACCESS`` (``default_access`` when the
        access is left out); ``options`` are the family's per-cell option values."""
        agent, at, access = spec.partition("@")
        if not agent or (at and not access):
            raise ValueError(f"cell {spec!r} is not 'agent' or 'agent@ACCESS'")
        return cls(agent, access if at else default_access, options)

    @classmethod
    def parse(cls, name: str, option_keys: tuple[str, ...] = ()) -> Cell:
        agent, at, rest = name.partition("@")
        parts = rest.split("/")
        if not at or not agent or len(parts) != 1 + len(option_keys):
            form = "agent@ACCESS" + "".join(f"/{k}" for k in option_keys)
            raise ValueError(f"cell {name!r} is not {form!r}")
        return cls(agent, parts[0], tuple(zip(option_keys, parts[1:], strict=True)))


@dataclass(frozen=True)
class RunConfig:
    """What a run plays. ``env_kwargs`` (JSON values) go to every ``gym.make``; ``plugins``
    describes the objects passed to ``run_evaluation`` beside it (probe checkpoints...), recorded
    for provenance and for the resume check. ``generator_version`` is the family's: a changed
    bank must not resume an old run."""

    env_id: str
    cells: tuple[Cell, ...]
    item_ids: tuple[str, ...]
    rollouts: int = 1
    seed: int = 0
    env_kwargs: tuple[tuple[str, Any], ...] = ()
    plugins: tuple[tuple[str, str], ...] = ()
    generator_version: str = field(default="")

    def __post_init__(self) -> None:
        env_family = family(self.env_id)
        if not self.generator_version:
            object.__setattr__(self, "generator_version", env_family.generator_version)
        if not self.cells:
            raise ValueError("nothing to run: no cells")
        if len(set(self.cells)) != len(self.cells):
            raise ValueError("cells repeat")
        for cell in self.cells:
            env_family.check_access(cell.access)
            if tuple(k for k, _ in cell.options) != env_family.cell_options:
                raise ValueError(
                    f"{cell.name}: a {env_family.name} cell sets {list(env_family.cell_options)}"
                )
        if self.rollouts < 1:
            raise ValueError("rollouts must be >= 1")
        if not self.item_ids:
            raise ValueError("no items")

    def to_json(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "cells": [c.name for c in self.cells],
            "item_ids": list(self.item_ids),
            "rollouts": self.rollouts,
            "seed": self.seed,
            "env_kwargs": [list(kv) for kv in self.env_kwargs],
            "plugins": [list(kv) for kv in self.plugins],
            "generator_version": self.generator_version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunConfig:
        keys = family(data["env_id"]).cell_options
        return cls(
            env_id=data["env_id"],
            cells=tuple(Cell.parse(c, keys) for c in data["cells"]),
            # a run folder of the previous release says "episode_ids"
            item_ids=tuple(data["item_ids"] if "item_ids" in data else data["episode_ids"]),
            rollouts=data["rollouts"],
            seed=data["seed"],
            env_kwargs=tuple(tuple(kv) for kv in data["env_kwargs"]),
            plugins=tuple(tuple(kv) for kv in data["plugins"]),
            generator_version=data["generator_version"],
        )


__all__ = ["Cell", "RunConfig"]
