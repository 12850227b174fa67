"""Find env families by id. ``hear_gym/envs/registration.py`` holds import strings only, so nothing
here imports a family until it is asked for."""

from __future__ import annotations

from functools import cache, partial
from importlib import import_module

import gymnasium as gym

from hear_gym.core.family import EnvFamily
from hear_gym.envs.registration import FAMILIES


def env_ids() -> tuple[str, ...]:
    return tuple(FAMILIES)


@cache
def family(env_id: str) -> EnvFamily:
    try:
        target = FAMILIES[env_id]
    except KeyError:
        raise ValueError(f"unknown env id {env_id!r}; registered: {list(FAMILIES)}") from None
    module, _, attr = target.partition(":")
    found = getattr(import_module(module), attr)
    if not isinstance(found, EnvFamily) or found.env_id != env_id:
        raise TypeError(f"{target} is not the EnvFamily of {env_id}")
    return found


def make_checked(env_id: str, **kwargs) -> gym.Env:
    """What ``gym.make(env_id, ...)`` builds: the family's ``make`` inside Gymnasium's passive
    checker, inside the reset-argument check (``hear_gym.wrappers.reset_check``)."""
    from hear_gym.wrappers.reset_check import checked

    return checked(family(env_id).make(**kwargs))


def register_envs() -> None:
    """Register every id with Gymnasium; ``gym.make`` then calls ``make_checked`` (which applies
    the passive checker itself, inside the reset check, so Gymnasium's own is left off)."""
    for env_id in FAMILIES:
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=partial(make_checked, env_id), disable_env_checker=True)
