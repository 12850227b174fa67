"""Replay a finished episode from its ``results.jsonl`` record, turn by turn, as the agent met it.

Everything an episode observed follows from what the record holds, because envs are deterministic
by construction: the same env kwargs (the run's ``env_kwargs`` and the cell's options), the
record's access condition, episode id and seed, and the agent's replies. A family that declares
``EnvFamily.replay_replies(record)`` gives those replies as text actions; the episode is then
stepped through with them (``actions="text"``), and every turn shows what the agent observed (its
text entries and the clip it heard), its reply, the reward and the running return. A family
without it gets its first observation only (all a single-decision episode observes). The replay
is checked against the record: its return must be the record's, else ``Replay.matches`` is False
and a viewer says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from hear_gym.core.registry import family

AUDIO_KEY = "audio"
LENGTH_KEY = "audio_length"


@dataclass(frozen=True)
class Turn:
    """One observation and what followed it: the text entries that changed (all of them on the
    first turn), the clip the agent heard with it (float32, 16 kHz; empty when none), then the
    reply, the reward and the return so far (None for an observation no reply followed)."""

    texts: dict[str, str]
    clip: np.ndarray
    reply: str | None = None
    reward: float | None = None
    running_return: float | None = None


@dataclass
class Replay:
    turns: list[Turn] = field(default_factory=list)
    complete: bool = False  # every reply replayed (the family declares replay_replies)
    matches: bool = True  # the replayed return is the record's (checked when complete)
    note: str = ""


def _texts(observation: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in observation.items() if isinstance(v, str)}


def _clip(observation: dict[str, Any]) -> np.ndarray:
    if AUDIO_KEY not in observation:
        return np.zeros(0, np.float32)
    return np.asarray(observation[AUDIO_KEY][: int(observation[LENGTH_KEY][0])], dtype=np.float32)


def _changed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    shown = {}
    for key, text in after.items():
        old = before.get(key, "")
        if text != old:
            shown[key] = text[len(old) :].strip("\n") if old and text.startswith(old) else text
    return shown


def replay_episode(
    record: dict[str, Any], env_id: str, env_kwargs: dict[str, Any], cell_options: dict[str, Any]
) -> Replay:
    """The turns of ``record``'s episode (module docstring); ``env_kwargs``: the run's."""
    env_family = family(env_id)
    item_id = record["item_id"]
    replies = env_family.replay_replies(record) if env_family.replay_replies else None
    env = gym.make(
        env_id,
        access=record["access"],
        actions="text" if replies is not None else "discrete",
        **env_family.episode_kwargs([item_id]),
        **env_kwargs,
        **cell_options,
    )
    try:
        observation, _ = env.reset(seed=int(record["seed"]), options=env_family.reset_options(item_id))
        before = _texts(observation)
        replay = Replay([Turn(before, _clip(observation))])
        if replies is None:
            replay.note = "first observation only: the family declares no replay of its replies"
            return replay
        total, done = 0.0, False
        for reply in replies:
            if done:
                break
            observation, reward, terminated, truncated, _ = env.step(reply)
            total += float(reward)
            done = bool(terminated or truncated)
            last = replay.turns[-1]
            replay.turns[-1] = Turn(last.texts, last.clip, reply, float(reward), total)
            if not done:
                texts = _texts(observation)
                replay.turns.append(Turn(_changed(before, texts), _clip(observation)))
                before = texts
        replay.complete = done
        expected = env_family.episode_scalars(record)["return"] if env_family.episode_scalars else None
        replay.matches = done and (expected is None or abs(total - float(expected)) < 1e-9)
        if not replay.matches:
            replay.note = f"the replay does not reproduce the record (return {total} vs {expected})"
        return replay
    finally:
        env.close()


__all__ = ["Replay", "Turn", "replay_episode"]
