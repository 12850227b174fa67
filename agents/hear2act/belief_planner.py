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

The ear reads only the observation; nothing comes from ``info``. With a simulated ear it reads the
T+S tag through a probe of controlled quality (``SimulatedEar``), a measuring instrument; with a
trained audio probe (``ProbeEar``, A+T) it is a listener.

    hear-gym eval --cell belief_planner:PROBE.safetensors@A+T --feedback prosody --option turn_cost=0.1
"""

from __future__ import annotations

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

    def _value(self, weights, current, depth, disclosed):
        return self.words._value(weights, current, depth, frozenset())


class BeliefPlannerAgent(PlannerAgent):
    """The planner on an ear's calibrated likelihoods (module docstring)."""

    def __init__(self, ear: Ear | None = None, **planner_options: Any) -> None:
        self.ear = ear if ear is not None else DeafEar()
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
            model = UserModel.from_observation(observation, feedback)
            if channel is None:
                planner = Planner(model, self.turn_cost, self.reward, None)
            elif self.ear.exact:
                planner = Planner(model, self.turn_cost, self.reward, self.ear.lookahead())
            else:
                planner = ListeningPlanner(model, self.turn_cost, self.reward, self.ear.lookahead())
            self._planners[feedback, channel] = planner
        return self._planners[feedback, channel]
