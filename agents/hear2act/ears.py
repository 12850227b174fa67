"""Ears: what a belief planner (``agents.hear2act.belief_planner``) hears on each user turn, as
calibrated likelihoods rather than a verdict.

An ear turns one observation into ``P(what it heard | graded state)`` for each ``ConcernState``
(genuine or reluctant acceptance, voiced concern, rejection), in ``GRADES`` order; only ratios
matter. It also says what it expects to hear next (``lookahead``): a ``BinnedChannel`` over a
few readings, which the planner enumerates when it weighs the next reply.

* ``TagEar`` (T+S): the ground-truth tag, exact. A belief planner on it plays ``planner@T+S``.
* ``DeafEar`` (T): hears nothing. A belief planner on it plays ``planner@T``.
* ``SimulatedEar`` (T+S): a ``ScoreEar`` or ``VerdictEar`` (``agents.hear2act.simulated_ear``) on
  the tag, errors drawn per turn from the episode's seed: a probe of controlled quality.
* ``ProbeEar`` (``agents.hear2act.probe_ear``): a trained audio probe, calibrated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from scipy.stats import norm

from agents.hear2act.simulated_ear import ScoreEar, VerdictEar, ear_generator, resolved_tag
from hear_gym.envs.hear2act.access import ConcernStateTag
from hear_gym.envs.hear2act.user.states import STATE_OF_LABEL, ConcernState

GRADES: tuple[ConcernState, ...] = tuple(ConcernState)
_GENUINE = GRADES.index(ConcernState.GENUINE_ACCEPTANCE)
# Log-likelihood-ratio edges (resolved : unresolved) of the readings a planner enumerates ahead:
# a confirm pays only on strong evidence for resolved, so the bins are finer on that side.
LOOKAHEAD_EDGES = (0.0, 2.0, 4.0)

Likelihoods = tuple[float, ...]  # P(heard | grade), one per GRADES


def resolved_likelihoods(given_resolved: float, given_unresolved: float) -> Likelihoods:
    """An ear that tells genuine acceptance from the rest, and nothing about the rest's grade."""
    return tuple(given_resolved if i == _GENUINE else given_unresolved for i in range(len(GRADES)))


@dataclass(frozen=True)
class LikelihoodChannel:
    """The belief's channel (``UserModel.belief``): a reading is an ear's ``Likelihoods``; a
    user's weight is multiplied by the entry of its grade on that turn."""

    graded: ClassVar[bool] = False
    exact: ClassVar[bool] = False

    def likelihood(self, reading: Likelihoods, resolved: bool, grade: ConcernState | None) -> float:
        if grade is None:  # before any recommendation: only resolution is known
            grade = ConcernState.GENUINE_ACCEPTANCE if resolved else ConcernState.RELUCTANT_ACCEPTANCE
        return reading[GRADES.index(grade)]


@dataclass(frozen=True)
class BinnedChannel:
    """What an ear expects to hear next, for the planner's lookahead: ``probabilities[r][g]`` is
    P(reading r | grade g). The planner counts readings of recommendations only
    (``graded``, ``agents.hear2act.planner``): a reply to an ask repeats the grade of the
    current option, heard before, and weighing it too would multiply the lookahead's cost."""

    probabilities: tuple[Likelihoods, ...]
    graded: ClassVar[bool] = True

    @property
    def exact(self) -> bool:
        return all(p in (0.0, 1.0) for row in self.probabilities for p in row)

    @property
    def readings(self) -> tuple[int, ...]:
        return tuple(range(len(self.probabilities)))

    def likelihood(self, reading: int, resolved: bool, grade: ConcernState | None) -> float:
        if grade is None:
            grade = ConcernState.GENUINE_ACCEPTANCE if resolved else ConcernState.RELUCTANT_ACCEPTANCE
        return self.probabilities[reading][GRADES.index(grade)]


def resolved_bins(cdf_resolved: list[float], cdf_unresolved: list[float]) -> BinnedChannel:
    """A ``BinnedChannel`` from each class's cumulative probability at ``LOOKAHEAD_EDGES``."""
    edges_r, edges_u = [0.0, *cdf_resolved, 1.0], [0.0, *cdf_unresolved, 1.0]
    bins = [
        resolved_likelihoods(edges_r[i + 1] - edges_r[i], edges_u[i + 1] - edges_u[i])
        for i in range(len(edges_r) - 1)
    ]
    return BinnedChannel(tuple(b for b in bins if any(b)))


class Ear(Protocol):
    required_access: tuple[str, ...]
    exact: bool  # likelihoods all 0 or 1: the planner may plan on every future reading
    informative: bool  # False: the planner plays on the words alone

    def reset(self, seed: int | None) -> None: ...

    def hear(self, observation: dict[str, Any]) -> Likelihoods: ...

    def lookahead(self) -> BinnedChannel: ...


def _tag(observation: dict[str, Any], ear: object) -> str:
    if ConcernStateTag.KEY not in observation:
        raise KeyError(f"{type(ear).__name__} reads the T+S tag: it needs access T+S")
    tag = observation[ConcernStateTag.KEY]
    if tag not in STATE_OF_LABEL:
        raise ValueError(f"concern_state {tag!r} is none of the delivery labels {sorted(STATE_OF_LABEL)}")
    return tag


class TagEar:
    """The T+S tag read exactly as its graded state."""

    required_access = ("T+S",)
    exact, informative = True, True

    def reset(self, seed: int | None) -> None:
        pass

    def hear(self, observation: dict[str, Any]) -> Likelihoods:
        grade = STATE_OF_LABEL[_tag(observation, self)]
        return tuple(float(g is grade) for g in GRADES)

    def lookahead(self) -> BinnedChannel:
        one_hot = tuple(tuple(float(i == r) for i in range(len(GRADES))) for r in range(len(GRADES)))
        return BinnedChannel(one_hot)


class DeafEar:
    """Hears nothing: every likelihood equal."""

    required_access = ("T", "T+S", "A+T")
    exact, informative = False, False

    def reset(self, seed: int | None) -> None:
        pass

    def hear(self, observation: dict[str, Any]) -> Likelihoods:
        return (1.0,) * len(GRADES)

    def lookahead(self) -> BinnedChannel:
        return BinnedChannel(((1.0,) * len(GRADES),))


class SimulatedEar:
    """A simulated probe on the T+S tag: its errors per turn from the episode's seed."""

    required_access = ("T+S",)
    exact, informative = False, True

    def __init__(self, probe: ScoreEar | VerdictEar) -> None:
        self.probe = probe
        self.reset(None)

    def reset(self, seed: int | None) -> None:
        self.rng = ear_generator(seed)

    def hear(self, observation: dict[str, Any]) -> Likelihoods:
        heard = self.probe.hear(resolved_tag(_tag(observation, self)), self.rng)
        return resolved_likelihoods(*self.probe.likelihoods(heard))

    def lookahead(self) -> BinnedChannel:
        if isinstance(self.probe, VerdictEar):
            return BinnedChannel(
                tuple(resolved_likelihoods(*self.probe.likelihoods(v)) for v in (True, False))
            )
        if self.probe.separation == 0:
            return BinnedChannel((resolved_likelihoods(1.0, 1.0),))
        # score s: log-likelihood ratio d * s, so an LLR edge e is the score e / d
        d, half = self.probe.separation, self.probe.separation / 2
        scores = [edge / d for edge in LOOKAHEAD_EDGES]
        return resolved_bins(
            [float(norm.cdf(s - half)) for s in scores], [float(norm.cdf(s + half)) for s in scores]
        )
