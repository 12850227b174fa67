"""Onset agents for ``hear-gym eval --env hear_gym/Onset-v0``: the matched controls and the probes.

* ``AlwaysWaitAgent``: never acts (the cost of never acting).
* ``EndpointPluralityAgent``: Wait, except at the final prefix (the oracle final-prefix
  indicator is the observation's ``prefix_index``), where it emits the training split's most
  frequent source action.
* ``ProbeAgent`` subclasses: a ``Probe`` of one kind fitted on the training split's clean prefix
  records when the agent is built (features are cached on disk after the first time), then
  applied to each prefix on show: ``audio_probe``, ``shuffled_probe``, ``scalar_probe``,
  ``elapsed_probe``, ``text_probe``, ``audio_text_probe``.
* ``EncoderProbeAgent`` (``encoder_probe:FOLDER``): the same probe on a pretrained speech
  encoder's representation, the encoder loaded from a local folder (``agents.onset.encoder``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agents.onset.probes import Probe, prefix_rows
from hear_gym.envs.onset.actions import SOURCE_ACTIONS, WAIT
from hear_gym.envs.onset.groups.generator import select_groups
from hear_gym.envs.onset.groups.model import N_PREFIXES

_AUDIO = ("A", "A+T")


class AlwaysWaitAgent:
    required_access = ("A", "A+T", "T")

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        return 0  # Wait


def plurality_action(split: str = "train") -> str:
    """The most frequent source action of the split's trajectories (ties: label order)."""
    counts = Counter(b.action for g in select_groups(split) for b in g.branches)
    return max(SOURCE_ACTIONS, key=lambda a: (counts[a], -SOURCE_ACTIONS.index(a)))


class EndpointPluralityAgent:
    required_access = ("A", "A+T", "T")

    def __init__(self) -> None:
        from hear_gym.envs.onset.actions import index_of

        self.final_action = index_of(plurality_action())

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        return self.final_action if int(observation["prefix_index"][0]) == N_PREFIXES - 1 else 0


class ProbeAgent:
    kind = "audio"
    required_access: tuple[str, ...] = _AUDIO

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe or Probe(self.kind).fit(prefix_rows("train"))

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        from hear_gym.envs.onset.actions import index_of

        audio = observation.get("audio")
        wave = audio[: int(observation["audio_length"][0])] if audio is not None else None
        label = self.probe.predict_prefix(wave, observation["text"])
        return index_of(label) if label != WAIT else 0


class AudioProbeAgent(ProbeAgent):
    kind = "audio"


class ShuffledProbeAgent(ProbeAgent):
    kind = "shuffled"


class ScalarProbeAgent(ProbeAgent):
    kind = "scalar"


class ElapsedProbeAgent(ProbeAgent):
    kind = "elapsed"


class TextProbeAgent(ProbeAgent):
    kind = "text"
    required_access = ("T", "A+T")


class AudioTextProbeAgent(ProbeAgent):
    kind = "audio_text"
    required_access = ("A+T",)


class EncoderProbeAgent(ProbeAgent):
    kind = "encoder"

    @classmethod
    def from_checkpoint(cls, path, rows=None) -> EncoderProbeAgent:
        """Fit on the training split's clean prefixes (or ``rows``) through the encoder at ``path``."""
        from agents.onset.encoder import SpeechEncoder

        probe = Probe("encoder", encoder=SpeechEncoder(path))
        return cls(probe.fit(rows if rows is not None else prefix_rows("train")))
