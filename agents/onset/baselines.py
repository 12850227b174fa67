"""Onset agents for ``hear-gym eval --env hear_gym/Onset-v0``: the matched controls and the probes.

* ``AlwaysWaitAgent``: never acts (the cost of never acting).
* ``EndpointPluralityAgent``: Wait, except at the final prefix (the oracle final-prefix
  indicator is the observation's ``prefix_index``), where it emits the training split's most
  frequent source action.
* ``ProbeAgent`` subclasses: a ``Probe`` of one kind fitted on the training split's clean prefix
  records before its first decision (once per process and renderer, shared by the agents the
  runner builds for each episode; features are cached on disk after the first time), then
  applied to each prefix on show: ``audio_probe``, ``shuffled_probe``, ``scalar_probe``,
  ``elapsed_probe``, ``text_probe``, ``audio_text_probe``. The training prefixes are spoken by
  the renderer of the env it plays (``hear-gym eval --renderer``, told through ``configure``),
  eSpeak otherwise.
* ``EncoderProbeAgent`` (``encoder_probe:FOLDER``): the same probe on a pretrained speech
  encoder's representation, the encoder loaded from a local folder (``agents.onset.encoder``).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.onset.probes import Probe, prefix_rows
from hear_gym.envs.onset.actions import SOURCE_ACTIONS, WAIT
from hear_gym.envs.onset.groups.generator import select_groups
from hear_gym.envs.onset.groups.model import N_PREFIXES
from hear_gym.envs.onset.scenes import DEFAULT_RENDERER

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


@functools.lru_cache(maxsize=16)
def trained_probe(kind: str, renderer: str, encoder=None) -> Probe:
    """A ``kind`` probe fitted on the training split's clean prefixes as ``renderer`` speaks them,
    once per process: predicting reads it and changes nothing, so every agent shares it."""
    return Probe(kind, encoder=encoder).fit(prefix_rows("train", renderer=renderer))


@functools.cache
def _speech_encoder(folder: str):
    from agents.onset.encoder import SpeechEncoder

    return SpeechEncoder(folder)


class ProbeAgent:
    kind = "audio"
    required_access: tuple[str, ...] = _AUDIO
    encoder = None

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe  # fitted before the first decision unless given
        self.renderer = DEFAULT_RENDERER

    def unfitted_probe(self) -> Probe:
        return Probe(self.kind, encoder=self.encoder)

    def configure(self, env_options: Mapping[str, Any]) -> None:
        """Learn from the training prefixes as the env's renderer speaks them."""
        self.renderer = env_options.get("renderer", DEFAULT_RENDERER)

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        from hear_gym.envs.onset.actions import index_of

        if self.probe is None:
            self.probe = trained_probe(self.kind, self.renderer, self.encoder)
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

    def __init__(self, encoder, probe: Probe | None = None) -> None:
        super().__init__(probe)
        self.encoder = encoder

    @classmethod
    def from_checkpoint(cls, path, rows=None) -> EncoderProbeAgent:
        """The probe through the encoder at ``path`` (loaded once per process), fitted on ``rows``
        now if given, else on the training split's clean prefixes before its first decision."""
        agent = cls(_speech_encoder(str(Path(path).resolve())))
        if rows is not None:
            agent.probe = agent.unfitted_probe().fit(rows)
        return agent
