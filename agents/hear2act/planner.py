"""The strongest policy we can write for Hear2Act: exact Bayesian planning over who the user is.

``PlannerAgent`` is the reference a learned or LLM policy should be measured against. It keeps
the users the visible world allows (``agents.hear2act.user_model``: every (L1, L2, L3) triple the
generator's construction permits, uniform as the generator draws them), removes every user whose
reaction to each turn so far is not what the user actually said, and, under T+S, T+S^ or T+SER,
weighs the rest by the state channel's reading of each turn (``reads_resolved``, the rule
agents' reading). Under T it reads the words alone: ``planner@T`` is the best transcript policy,
``planner@T+S`` (the same planner hearing the ground-truth concern state) the ceiling of
listening.

Decision rule. With belief ``b`` over users, current option ``o`` and ``n`` turns left to plan,

    V(b, o, 0) = E_b[R(u, o)]
    V(b, o, n) = max_a  -c + sum_r P_b(r | a, o) * (E_{b|r}[R(u, o')]   if r ends the episode
                                                    V(b|r, o', n - 1)    otherwise)

where ``R(u, o)`` is the env's final reward for option ``o`` if ``u`` is the user (``success``:
o is u's gold; ``tiered``: the weights of the concerns o meets, 0 over budget), ``c`` the turn
cost, ``r`` ranges over what the reply can show (the dimension its words name, whether they come
from the shared acceptance pool, whether the user commits, and under a state channel whether
it reads resolved) and ``o'`` is the option after ``a``. ``n`` is the env's remaining turns, capped
at ``PLAN_DEPTH``; at ``n = 0`` the episode ends on ``o`` (truncation, exact when the cap does not
bind). The recursion is exact enumeration with memoization over (b, o, n), so ``planner`` plays
the Bayes-optimal policy of this model for the horizon.

Choices the rule makes:

* actions: confirm, recommending an in-budget option meeting some remaining user's L1, a
  general ask and a targeted ask per dimension; clarify is left out (a general ask tells more);
  an action that can change neither the belief nor the option is skipped;
* ties go to the first action in that order (confirm, recommend by option id, general ask,
  targeted asks by slot); with ``turn_cost=0`` the planner still charges ``MIN_PLANNING_COST`` a
  turn so that it prefers the shorter of two equally sure plans;
* feedback: the planner assumes ``feedback`` (the env's default, prosody); when the words
  contradict every user under it (a recommendation answered in words under explicit feedback)
  it reads the dialogue again under the other feedback and plays that;
* a state channel is taken at ``state_recall`` / ``state_false_resolved`` (exact by default, as
  T+S is); if its readings and the words leave no user, the readings are dropped.

The env's ``turn_cost``, ``reward`` and ``max_turns`` are not in the observation; the agent takes
them as keyword arguments with the env's defaults, so a run at another turn cost must build it
with that cost (``functools.partial(PlannerAgent, turn_cost=0.1)``).
"""

from __future__ import annotations

from typing import Any

from agents.hear2act.lexicon import DialogueView
from agents.hear2act.rule import STATE_ACCESS, STATE_CHANNELS, reads_resolved, state_channel
from agents.hear2act.user_model import StateChannel, UserModel
from hear_gym.envs.hear2act.actions import ASK_GENERAL, ASK_SLOT0, CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.env import REWARDS, TIER_WEIGHTS
from hear_gym.envs.hear2act.user.states import Feedback

PLAN_DEPTH = 6  # turns planned ahead; the longest plan the model needs is 5
MIN_PLANNING_COST = 1e-4  # per turn when the env charges none: shorter plans win ties
_TIE = 1e-9


class Planner:
    """Exact expected-return planning for one scenario under one ``UserModel``.

    Beliefs are unnormalized weights over ``model.users`` and values are unnormalized too
    (``U(w) = sum(w) * V(w / sum(w))``), so words alone keep every weight 0 or 1 and a belief is
    its own memo key; a noisy state channel's beliefs are normalized for the key."""

    def __init__(self, model: UserModel, turn_cost: float, reward: str, channel: StateChannel | None) -> None:
        self.model = model
        self.cost = max(turn_cost, MIN_PLANNING_COST)
        self.final = tuple(
            tuple(self._final(reward, user, o.option_id) for user in model.users) for o in model.view.options
        )
        self.readings = (None,) if channel is None else (True, False)
        self.channel = channel
        self.exact = channel is None or {channel.recall, channel.false_resolved} <= {0.0, 1.0}
        in_budget = [o.option_id for o in model.view.options if o.option_id not in model.over_budget]
        self.feasible = tuple(
            frozenset(o for o in in_budget if model.view.features[o].get(user.levels[0], False))
            for user in model.users
        )
        n_dims = len(model.lexicon.domain.concern_dimensions)
        self.asks = (ASK_GENERAL, *(ASK_SLOT0 + i for i in range(n_dims)))
        self._outcomes: dict[tuple[int, int], tuple[tuple[bool, tuple[float, ...]], ...] | None] = {}
        self._memo: dict[tuple, float] = {}

    def _final(self, reward: str, user, option: int) -> float:
        if reward == "success":
            return float(option == user.gold)
        if option in self.model.over_budget:
            return 0.0
        missed = self.model.missed(user, option)
        return sum(w for w, level in zip(TIER_WEIGHTS, user.levels, strict=True) if level not in missed)

    def best_action(self, weights: list[float], current: int, turns_left: int) -> int:
        belief = self._key(weights)
        depth = max(1, min(turns_left, PLAN_DEPTH))
        best, best_q = CONFIRM, float("-inf")
        for action in self._actions(belief, current):
            q = self._q(action, belief, current, depth)
            if q is not None and q > best_q + _TIE:
                best, best_q = action, q
        return best

    # -- the recursion --------------------------------------------------------------------
    def _value(self, weights: tuple[float, ...], current: int, depth: int) -> float:
        mass = sum(weights)
        if depth == 0:
            return self._expected_final(weights, current)
        belief = self._key(weights)
        key = (belief, current, depth)
        if key not in self._memo:
            qs = (self._q(a, belief, current, depth) for a in self._actions(belief, current))
            self._memo[key] = max(
                (q for q in qs if q is not None), default=self._expected_final(belief, current)
            )
        return self._memo[key] * (mass / sum(belief))

    def _q(self, action: int, belief: tuple[float, ...], current: int, depth: int) -> float | None:
        """Unnormalized expected return of ``action`` then planning on; None when it can change
        neither the belief nor the option."""
        after = action - RECOMMEND0 + 1 if RECOMMEND0 <= action < CONFIRM else current
        branches = []
        for ended, likelihood in self._outcomes_of(action, current):
            posterior = tuple(w * p for w, p in zip(belief, likelihood, strict=True))
            if any(posterior):
                branches.append((ended, posterior))
        if len(branches) == 1 and not branches[0][0] and after == current:
            return None  # one possible reply, which teaches nothing
        q = -self.cost * sum(belief)
        for ended, posterior in branches:
            if ended:
                q += self._expected_final(posterior, current)
            else:
                q += self._value(posterior, after, depth - 1)
        return q

    def _outcomes_of(self, action: int, current: int) -> tuple[tuple[bool, tuple[float, ...]], ...]:
        """Each reply ``action`` can get, as (whether the user commits, its likelihood per user)."""
        key = (action, current)
        if key not in self._outcomes:
            reactions = self.model.reactions(action, current)
            groups: dict[tuple, list[float]] = {}
            for i, reaction in enumerate(reactions):
                for reading in self.readings:
                    p = 1.0 if reading is None else self.channel.likelihood(reading, reaction.resolved)
                    if p > 0:
                        shown = (reaction.named, reaction.pooled, reaction.ended, reading)
                        groups.setdefault(shown, [0.0] * len(reactions))[i] = p
            self._outcomes[key] = tuple((shown[2], tuple(lik)) for shown, lik in groups.items())
        return self._outcomes[key]

    def _actions(self, belief: tuple[float, ...], current: int) -> list[int]:
        options = frozenset().union(*(self.feasible[i] for i, w in enumerate(belief) if w > 0))
        asks = [a for a in self.asks if self.model.reactions(a, current) is not None]
        return [CONFIRM, *(RECOMMEND0 + o - 1 for o in sorted(options)), *asks]

    def _expected_final(self, weights: tuple[float, ...], option: int) -> float:
        return sum(w * f for w, f in zip(weights, self.final[option - 1], strict=True))

    def _key(self, weights) -> tuple[float, ...]:
        if self.exact:
            return tuple(weights)
        total = sum(weights)
        return tuple(round(w / total, 12) for w in weights)


class PlannerAgent:
    """Plays ``Planner`` (module docstring). Reads a state channel when the access condition
    provides one (T+S, T+S^, T+SER); under T, words alone."""

    required_access = ("T", *STATE_ACCESS)

    def __init__(
        self,
        turn_cost: float = 0.0,
        reward: str = "success",
        feedback: str = "prosody",
        max_turns: int = 20,
        state_recall: float = 1.0,
        state_false_resolved: float = 0.0,
    ) -> None:
        if not isinstance(turn_cost, (int, float)) or isinstance(turn_cost, bool) or turn_cost < 0:
            raise ValueError(f"planner turn_cost must be a number >= 0 (the env's), got {turn_cost!r}")
        if reward not in REWARDS:
            raise ValueError(f"planner reward must be one of {sorted(REWARDS)} (the env's), got {reward!r}")
        if feedback not in {f.value for f in Feedback}:
            raise ValueError(
                f"planner feedback must be one of {[f.value for f in Feedback]}, got {feedback!r}"
            )
        if not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"planner max_turns must be a positive int (the env's), got {max_turns!r}")
        self.turn_cost, self.reward, self.max_turns = float(turn_cost), reward, max_turns
        self.feedback = Feedback(feedback)
        self.channel = StateChannel(state_recall, state_false_resolved)
        self._episode_key: tuple[str, str] | None = None
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._readings: dict[int, bool] = {}

    def act(self, observation: dict[str, Any]) -> int:
        listening = any(key in observation for key in STATE_CHANNELS)
        if listening:
            self._readings[int(observation["turn"])] = reads_resolved(
                state_channel(observation, type(self).__name__)
            )
        planner, weights = self._belief(observation, listening)
        turns_left = self.max_turns - int(observation["turn"])
        return planner.best_action(weights, int(observation["current_option"]), turns_left)

    def _belief(self, observation: dict[str, Any], listening: bool) -> tuple[Planner, list[float]]:
        """The planner of the first reading of the dialogue that leaves some user: the assumed
        feedback with the state readings, without them, then the other feedback likewise."""
        key = (observation["domain"], observation["options"])
        if key != self._episode_key:
            self._episode_key, self._planners = key, {}
        other = Feedback.EXPLICIT if self.feedback is Feedback.PROSODY else Feedback.PROSODY
        readings = (self._readings, {}) if listening else ({},)
        fallback = None
        for feedback in (self.feedback, other):
            planner = self._planner(observation, feedback, listening)
            dialogue = DialogueView.parse(observation["transcript"], planner.model.lexicon)
            for heard in readings:
                weights = planner.model.posterior(dialogue, heard, self.channel)
                if sum(weights) > 0:
                    return planner, weights
            fallback = fallback or (planner, [1.0] * len(weights))
        return fallback  # words no user would say: plan from the prior

    def _planner(self, observation: dict[str, Any], feedback: Feedback, listening: bool) -> Planner:
        if feedback not in self._planners:
            model = UserModel.from_observation(observation, feedback)
            channel = self.channel if listening else None
            self._planners[feedback] = Planner(model, self.turn_cost, self.reward, channel)
        return self._planners[feedback]
