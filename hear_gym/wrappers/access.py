"""What every family's access conditions share: one table from condition name to wrapper stack,
and one wrapper that hides the user's words where the agent is meant to hear them instead.

A family's ``access.py`` declares ``ACCESS_CONDITIONS`` (condition -> a function that wraps an
env, given the family's context arguments, if any) and ``apply_access`` delegates to
:func:`apply_access_table`, so ``gym.make(ID, access=...)`` and ``apply_access(env, ...)`` agree and
an unknown condition gets the same error in every family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import gymnasium as gym
from gymnasium import spaces

from hear_gym.core.text import SPEECH_PLACEHOLDER

AccessTable = Mapping[str, Callable[..., gym.Env]]


def check_access(access: str, table: AccessTable, family: str) -> None:
    """A clear ``ValueError`` for a condition ``table`` does not have (before any env is built)."""
    if access not in table:
        raise ValueError(f"{family} access must be one of {list(table)}, got {access!r}")


def apply_access_table(env: gym.Env, access: str, table: AccessTable, family: str, *context) -> gym.Env:
    """``env`` under condition ``access`` of ``table`` (``context`` goes to the condition's builder)."""
    check_access(access, table, family)
    return table[access](env, *context)


class HiddenWords(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """The user's words become ``[speech]`` (``SPEECH_PLACEHOLDER``) in the observation.

    * ``keys``: text leaves that hold only the user's words; each is replaced whole.
    * ``transcript_key`` and ``user_prefix``: a dialogue transcript, one turn per line; only the
      lines that start with ``user_prefix`` lose their words (the agent's own lines stay).
    * ``only_with_audio``: hide nothing when ``audio_length`` is 0, i.e. when the turn has no
      audio to hear (a text-only input keeps its words, it has nothing else).
    """

    def __init__(
        self,
        env: gym.Env,
        keys: tuple[str, ...] = (),
        transcript_key: str | None = None,
        user_prefix: str = "User: ",
        only_with_audio: bool = False,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            keys=keys,
            transcript_key=transcript_key,
            user_prefix=user_prefix,
            only_with_audio=only_with_audio,
        )
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        wanted = (*keys, *([transcript_key] if transcript_key else []), *(["audio_length"] * only_with_audio))
        missing = [k for k in wanted if not isinstance(space, spaces.Dict) or k not in space.spaces]
        if missing:
            raise ValueError(f"HiddenWords: the observation has no {missing}")
        self.keys, self.transcript_key = keys, transcript_key
        self.user_prefix, self.only_with_audio = user_prefix, only_with_audio

    def observation(self, observation: dict) -> dict:
        if self.only_with_audio and observation["audio_length"][0] == 0:
            return observation
        hidden = {key: SPEECH_PLACEHOLDER for key in self.keys}
        if self.transcript_key:
            hidden[self.transcript_key] = "\n".join(
                f"{self.user_prefix}{SPEECH_PLACEHOLDER}" if line.startswith(self.user_prefix) else line
                for line in observation[self.transcript_key].split("\n")
            )
        return {**observation, **hidden}


__all__ = ["AccessTable", "HiddenWords", "apply_access_table", "check_access"]
