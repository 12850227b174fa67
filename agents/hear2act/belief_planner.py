"""``belief_planner``: the planner (``agents.hear2act.planner``) acting on what an ear's
likelihoods make of the users, not on a thresholded label taken as the truth.

An ear (``agents.hear2act.ears``) turns each user turn into calibrated likelihoods
``P(heard | graded state)``. The belief over the users the construction allows
(``agents.hear2act.user_model``) keeps those the words allow and weighs each by the likelihood of
everything heard under its own grades, turn by turn (``LikelihoodChannel``). The action is the
one of highest expected return under that belief:

* an exact ear (every likelihood 0 or 1, the T+S tag) is planned on at every future turn: the
  agent is ``planner@T+S``;
* a noisy ear is planned on for the next reply only (``ListeningPlanner``): each action's
  value sums over what its reply's words and the ear's reading of it (``BinnedChannel``, a few
  bins of its likelihood ratio) can be, then plans on the words alone. So a recommendation is
  worth what hearing its reply can settle (a likely genuine acceptance lets the next turn
  confirm), which a planner that plans on words alone does not count. Planning over noisy
  readings further ahead is intractable (no two beliefs share a memo key);
* an ear that hears nothing leaves the words: the agent is ``planner@T``.

``listen_ahead=False`` plans a noisy ear's beliefs on the words alone, as ``planner@T+S^`` plans
a probe's verdicts: what the lookahead over the next reading adds is the difference.

The ear reads only the observation; nothing comes from ``info``. With a simulated ear it reads the
T+S tag through a probe of controlled quality (``SimulatedEar``), a measuring instrument; with a
trained audio probe (``ProbeEar``, A+T) it is a listener.

    hear-gym eval --cell belief_planner:PROBE.safetensors@A+T --feedback prosody --option turn_cost=0.1
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from agents.hear2act.ears import BinnedChannel, DeafEar, Ear, LikelihoodChannel
from agents.hear2act.planner import Planner, PlannerAgent
from agents.hear2act.user_model import UserModel
from hear_gym.envs.hear2act.user.states import Feedback


class ListeningPlanner(Planner):
    """A ``Planner`` whose next reply is weighed with the ear's readings (``channel``) and whose
    later turns are planned on the words alone."""

    def __init__(self, model: UserModel, turn_cost: float, reward: str, channel: BinnedChannel) -> None:
        super().__init__(model, turn_cost, reward, channel)
        self.words = Planner(model, turn_cost, reward, None)
        # Beliefs that differ by a factor share a plan (values are homogeneous in the weights):
        # after one more reply, the beliefs behind different readings often do.
        self.words.exact = False
        self._merged: dict[tuple, tuple] = {}

    def _outcomes_of(self, action, current, disclosed):
        """The replies as ``Planner`` enumerates them, with the readings that cannot tell this
        reply's users apart (their likelihoods proportional: a reply only unresolved users give)
        merged into one. Values are homogeneous in the weights, so this is exact, and it spares a
        plan for each such reading."""
        key = (action, current, disclosed)
        if key not in self._merged:
            outcomes, after = super()._outcomes_of(action, current, disclosed)
            merged: dict[tuple, list[float]] = {}
            for ended, likelihood in outcomes:
                total = sum(likelihood)
                shape = (ended, tuple(round(p / total, 12) for p in likelihood))
                summed = merged.setdefault(shape, [0.0] * len(likelihood))
                for i, p in enumerate(likelihood):
                    summed[i] += p
            self._merged[key] = (tuple((shape[0], tuple(v)) for shape, v in merged.items()), after)
        return self._merged[key]

    def _value(self, weights, current, depth, disclosed):
        return self.words._value(weights, current, depth, frozenset())


class BeliefPlannerAgent(PlannerAgent):
    """The planner on an ear's calibrated likelihoods (module docstring)."""

    def __init__(self, ear: Ear | None = None, listen_ahead: bool = True, **planner_options: Any) -> None:
        self.ear = ear if ear is not None else DeafEar()
        self.listen_ahead = listen_ahead  # False: a noisy ear's next reading is not planned on
        self.required_access = self.ear.required_access
        super().__init__(**planner_options)
        self._likelihoods = LikelihoodChannel()

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> BeliefPlannerAgent:
        from agents.hear2act.probe_ear import ProbeEar

        return cls(ProbeEar.load(path))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.ear.reset(seed)

    def act(self, observation: dict[str, Any]) -> int:
        heard = self.ear.hear(observation)
        if self.ear.informative:
            self._readings[int(observation["turn"])] = heard
        channel = self._likelihoods if self.ear.informative else None
        planner, weights, disclosed = self._belief(observation, channel)
        # Products of likelihoods shrink turn by turn; the planner's values are unnormalized and
        # its ties absolute, so the belief is scaled to its largest weight (words alone: 0 or 1).
        top = max(weights)
        weights = [w / top for w in weights]
        turns_left = self.max_turns - int(observation["turn"])
        return planner.best_action(weights, int(observation["current_option"]), turns_left, disclosed)

    def _planner(self, observation: dict[str, Any], feedback: Feedback, channel) -> Planner:
        if (feedback, channel) not in self._planners:
            lookahead = None if channel is None else self.ear.lookahead()
            if lookahead is not None and not lookahead.exact and not self.listen_ahead:
                lookahead = None
            key = (
                observation["domain"],
                observation["options"],
                feedback,
                self.turn_cost,
                self.reward,
                lookahead,
            )
            planner = _SHARED_PLANNERS.get(key)
            if planner is None:
                model = UserModel.from_observation(observation, feedback)
                if lookahead is None or lookahead.exact:
                    planner = Planner(model, self.turn_cost, self.reward, lookahead)
                else:
                    planner = ListeningPlanner(model, self.turn_cost, self.reward, lookahead)
                _SHARED_PLANNERS.put(key, planner)
            self._planners[feedback, channel] = planner
        return self._planners[feedback, channel]


class _PlannerCache:
    """Planners by scenario and settings, shared by the agents of one process: a planner is a
    memo of a pure function of what every episode of its scenario shows (the option list, the
    settings), so rollouts of a scenario reuse its plans. Nothing an agent heard is in it."""

    def __init__(self, size: int) -> None:
        self.size, self.entries = size, OrderedDict()

    def get(self, key: tuple) -> Planner | None:
        if key in self.entries:
            self.entries.move_to_end(key)
        return self.entries.get(key)

    def put(self, key: tuple, planner: Planner) -> None:
        self.entries[key] = planner
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


_SHARED_PLANNERS = _PlannerCache(64)
