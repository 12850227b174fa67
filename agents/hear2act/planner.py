"""The strongest policy we can write for Hear2Act: exact Bayesian planning over who the user is.

``PlannerAgent`` is the reference a learned or LLM policy should be measured against. It keeps
the users the visible world allows (``agents.hear2act.user_model``: every (L1, L2, L3) triple the
generator's construction permits, uniform as the generator draws them), removes every user whose
reaction to each turn so far is not what the user actually said, and, with a state channel,
weighs the rest by its reading of each turn. Under T+S the tag is read as its graded state
(``GradedStateChannel``: genuine or reluctant acceptance, voiced concern or rejection, the label
sets of ``hear_gym.envs.hear2act.user.states``), so the planner updates on everything the tag
says; a rejection of an option missing L1 tells, for instance, that it misses L2 as well.
Under T+S^ and T+SER the channel's text says resolved or not (a probe's two classes, a generic
affect label), so it is read as the rule agents read it (``reads_resolved``). Under T it reads
the words alone: ``planner@T`` is the best transcript policy, ``planner@T+S`` (the same planner
hearing the ground-truth concern state) the ceiling of listening.

Decision rule. With belief ``b`` over users, current option ``o`` and ``n`` turns left to plan,

    V(b, o, 0) = E_b[R(u, o)]
    V(b, o, n) = max_a  -c + sum_r P_b(r | a, o) * (E_{b|r}[R(u, o')]   if r ends the episode
                                                    V(b|r, o', n - 1)    otherwise)

where ``R(u, o)`` is the env's final reward for option ``o`` if ``u`` is the user (``success``:
o is u's gold; ``tiered``: the weights of the concerns o meets, 0 over budget), ``c`` the turn
cost, ``r`` ranges over what the reply can show (the dimension its words name, whether they come
from the shared acceptance pool, whether the user commits, and under a state channel its
reading) and ``o'`` is the option after ``a``. ``n`` is the env's remaining turns, capped
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
* a binary channel (T+S^, T+SER) is taken at ``state_recall`` / ``state_false_resolved``
  (exact by default); if the readings and the words leave no user, the readings are dropped.
  A noisy one (any other rates, e.g. a concern probe's, ``agents.hear2act.probe_planner``)
  weighs the readings heard so far in the belief, but the lookahead plans on the words alone:
  planning over noisy future readings is intractable (no two beliefs share a memo key), and
  taking future readings as exact makes the planner re-recommend an option to hear it again
  (a one-off check on 24 dev scenarios at cost 0.1: return 0.53, against 0.60 for words-only
  lookahead and 0.60 for ``planner@T``);
* the graded tag of a turn that recommends nothing repeats the grade of the current option's
  last recommendation, already heard, so plans count only the tags of recommendations.

The env's ``turn_cost``, ``reward``, ``feedback`` and ``max_turns`` are not in the observation.
The agent takes them as keyword arguments with the env's defaults, and ``configure`` (the
evaluation runner's hook, ``hear_gym.eval.runner``) sets them from the cell's env kwargs, so
``hear-gym eval --cell planner@T --option turn_cost=0.1`` plans at the run's cost. Given a
state probe (``--state-probe``), ``hear-gym eval`` builds its planners with
``through_state_inferrer``, so ``planner@T+S^`` weighs the probe's verdicts at the probe's dev
rates, as the listening-value benchmark does, not as exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from agents.hear2act.baselines import STATE_ACCESS, STATE_CHANNELS, reads_resolved, state_channel
from agents.hear2act.lexicon import DialogueView
from agents.hear2act.user_model import GradedStateChannel, StateChannel, UserModel
from hear_gym.envs.hear2act.access import ConcernStateTag
from hear_gym.envs.hear2act.actions import ASK_GENERAL, ASK_SLOT0, CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.env import REWARDS, TIER_WEIGHTS
from hear_gym.envs.hear2act.user.states import STATE_OF_LABEL, ConcernState, Feedback

PLAN_DEPTH = 6  # turns planned ahead; the longest plan the model needs is 5
MIN_PLANNING_COST = 1e-4  # per turn when the env charges none: shorter plans win ties
_TIE = 1e-9


class Planner:
    """Exact expected-return planning for one scenario under one ``UserModel``.

    Beliefs are unnormalized weights over ``model.users`` and values are unnormalized too
    (``U(w) = sum(w) * V(w / sum(w))``), so words alone keep every weight 0 or 1 and a belief is
    its own memo key; a noisy state channel's beliefs are normalized for the key. Under a graded
    channel the state also holds the users whose L1 is disclosed (a recommendation missing a
    disclosed L1 is a rejection)."""

    def __init__(
        self,
        model: UserModel,
        turn_cost: float,
        reward: str,
        channel: StateChannel | GradedStateChannel | None,
    ) -> None:
        self.model = model
        self.cost = max(turn_cost, MIN_PLANNING_COST)
        self.final = tuple(
            tuple(self._final(reward, user, o.option_id) for user in model.users) for o in model.view.options
        )
        self.channel = channel
        self.exact = channel is None or channel.exact
        self.graded = channel is not None and channel.graded
        in_budget = [o.option_id for o in model.view.options if o.option_id not in model.over_budget]
        self.feasible = tuple(
            frozenset(o for o in in_budget if model.view.features[o].get(user.levels[0], False))
            for user in model.users
        )
        n_dims = len(model.lexicon.domain.concern_dimensions)
        self.asks = (ASK_GENERAL, *(ASK_SLOT0 + i for i in range(n_dims)))
        self._outcomes: dict[tuple, tuple[tuple[tuple[bool, tuple[float, ...]], ...], frozenset[int]]] = {}
        self._memo: dict[tuple, float] = {}
        self._asks: dict[int, list[int]] = {}  # current option -> the asks whose replies are modelled

    def _final(self, reward: str, user, option: int) -> float:
        if reward == "success":
            return float(option == user.gold)
        if option in self.model.over_budget:
            return 0.0
        missed = self.model.missed(user, option)
        return sum(w for w, level in zip(TIER_WEIGHTS, user.levels, strict=True) if level not in missed)

    def best_action(
        self, weights: list[float], current: int, turns_left: int, l1_disclosed: frozenset[int] = frozenset()
    ) -> int:
        belief = self._key(weights)
        disclosed = self._disclosed(belief, l1_disclosed)
        depth = max(1, min(turns_left, PLAN_DEPTH))
        best, best_q = CONFIRM, float("-inf")
        for action in self._actions(belief, current):
            q = self._q(action, belief, current, depth, disclosed)
            if q is not None and q > best_q + _TIE:
                best, best_q = action, q
        return best

    # -- the recursion --------------------------------------------------------------------
    def _value(
        self, weights: tuple[float, ...], current: int, depth: int, disclosed: frozenset[int]
    ) -> float:
        mass = sum(weights)
        if depth == 0:
            return self._expected_final(weights, current)
        belief = self._key(weights)
        disclosed = self._disclosed(belief, disclosed)
        key = (belief, current, depth, disclosed)
        if key not in self._memo:
            qs = (self._q(a, belief, current, depth, disclosed) for a in self._actions(belief, current))
            self._memo[key] = max(
                (q for q in qs if q is not None), default=self._expected_final(belief, current)
            )
        return self._memo[key] * (mass / sum(belief))

    def _q(
        self, action: int, belief: tuple[float, ...], current: int, depth: int, disclosed: frozenset[int]
    ) -> float | None:
        """Unnormalized expected return of ``action`` then planning on; None when it can change
        neither the belief nor the option."""
        after = action - RECOMMEND0 + 1 if _recommends(action) else current
        outcomes, disclosed_after = self._outcomes_of(action, current, disclosed)
        branches = []
        for ended, likelihood in outcomes:
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
                q += self._value(posterior, after, depth - 1, disclosed_after)
        return q

    def _outcomes_of(
        self, action: int, current: int, disclosed: frozenset[int]
    ) -> tuple[tuple[tuple[bool, tuple[float, ...]], ...], frozenset[int]]:
        """Each reply ``action`` can get, as (whether the user commits, its likelihood per user),
        and the users whose L1 is disclosed after it."""
        key = (action, current, disclosed)
        if key not in self._outcomes:
            by_flag = [self.model.reactions(action, current, flag) for flag in (False, True)]
            reactions = [by_flag[i in disclosed][i] for i in range(len(self.model.users))]
            groups: dict[tuple, list[float]] = {}
            for i, reaction in enumerate(reactions):
                for reading in self._readings(action):
                    p = (
                        1.0
                        if reading is None
                        else self.channel.likelihood(reading, reaction.resolved, reaction.grade)
                    )
                    if p > 0:
                        shown = (reaction.named, reaction.pooled, reaction.ended, reading)
                        groups.setdefault(shown, [0.0] * len(reactions))[i] = p
            newly = (i for i, r in enumerate(reactions) if r.named == self.model.users[i].levels[0])
            after = disclosed.union(newly) if self.graded else frozenset()
            self._outcomes[key] = (tuple((shown[2], tuple(lik)) for shown, lik in groups.items()), after)
        return self._outcomes[key]

    def _readings(self, action: int) -> tuple[bool | ConcernState | None, ...]:
        """What the channel can read on the reply to ``action``; (None,): nothing new."""
        if self.channel is None or (self.graded and not _recommends(action)):
            return (None,)
        return self.channel.readings

    def _disclosed(self, belief: tuple[float, ...], disclosed: frozenset[int]) -> frozenset[int]:
        """Those of ``disclosed`` the belief keeps; only a graded channel's readings need them."""
        if not self.graded:
            return frozenset()
        return frozenset(i for i in disclosed if belief[i] > 0)

    def _actions(self, belief: tuple[float, ...], current: int) -> list[int]:
        options = frozenset().union(*(self.feasible[i] for i, w in enumerate(belief) if w > 0))
        if current not in self._asks:
            self._asks[current] = [a for a in self.asks if self.model.reactions(a, current) is not None]
        return [CONFIRM, *(RECOMMEND0 + o - 1 for o in sorted(options)), *self._asks[current]]

    def _expected_final(self, weights: tuple[float, ...], option: int) -> float:
        return sum(w * f for w, f in zip(weights, self.final[option - 1], strict=True))

    def _key(self, weights) -> tuple[float, ...]:
        if self.exact:
            return tuple(weights)
        total = sum(weights)
        return tuple(round(w / total, 12) for w in weights)


def _recommends(action: int) -> bool:
    return RECOMMEND0 <= action < CONFIRM


class PlannerAgent:
    """Plays ``Planner`` (module docstring). Reads a state channel when the access condition
    provides one (T+S graded, T+S^ and T+SER as resolved or not); under T, words alone."""

    required_access = ("T", *STATE_ACCESS)
    ENV_OPTIONS = ("turn_cost", "reward", "feedback", "max_turns")  # what ``configure`` reads

    def __init__(
        self,
        turn_cost: float = 0.0,
        reward: str = "success",
        feedback: str = "prosody",
        max_turns: int = 20,
        state_recall: float = 1.0,
        state_false_resolved: float = 0.0,
    ) -> None:
        self._set_env_options(turn_cost, reward, feedback, max_turns)
        self.channel = StateChannel(state_recall, state_false_resolved)
        self.reset()

    @classmethod
    def through_state_inferrer(cls, inferrer: Any) -> Callable[[], PlannerAgent]:
        """A factory of planners that weigh a T+S^ inferrer's verdicts at its ``verdict_rates``
        (a concern probe's recall and false-resolved share on the dev assents,
        ``agents.hear2act.audio_probe.channel_rates``; ``ValueError`` for a probe without them).
        An inferrer without rates is taken as exact. The rates are the T+S^ channel's: a run
        that also plays the planner under T+SER must not share them (``hear-gym eval`` refuses)."""
        rates = getattr(inferrer, "verdict_rates", None)
        if rates is None:
            return cls
        recall, false_resolved = rates()
        return partial(cls, state_recall=recall, state_false_resolved=false_resolved)

    def configure(self, env_options: Mapping[str, Any]) -> None:
        """The evaluation runner's hook: the cell's env kwargs. Takes the env's ``turn_cost``,
        ``reward``, ``feedback`` and ``max_turns`` from them; one a run leaves out keeps the
        agent's own (the env's default unless built otherwise)."""
        current = {"turn_cost": self.turn_cost, "reward": self.reward}
        current |= {"feedback": self.feedback.value, "max_turns": self.max_turns}
        self._set_env_options(*(env_options.get(name, current[name]) for name in self.ENV_OPTIONS))

    def _set_env_options(self, turn_cost: float, reward: str, feedback: str, max_turns: int) -> None:
        if not isinstance(turn_cost, (int, float)) or isinstance(turn_cost, bool) or turn_cost < 0:
            raise ValueError(f"planner turn_cost must be a number >= 0 (the env's), got {turn_cost!r}")
        if reward not in REWARDS:
            raise ValueError(f"planner reward must be one of {sorted(REWARDS)} (the env's), got {reward!r}")
        if feedback not in {f.value for f in Feedback}:
            raise ValueError(
                f"planner feedback must be one of {[f.value for f in Feedback]}, got {feedback!r}"
            )
        if not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1:
            raise ValueError(f"planner max_turns must be a positive int (the env's), got {max_turns!r}")
        self.turn_cost, self.reward, self.max_turns = float(turn_cost), reward, max_turns
        self.feedback = Feedback(feedback)
        self._episode_key: tuple[str, str] | None = None  # planners are built for these settings

    def reset(self, seed: int | None = None) -> None:
        self._readings: dict[int, bool | ConcernState] = {}

    def act(self, observation: dict[str, Any]) -> int:
        channel = self._channel(observation)
        if channel is not None:
            self._readings[int(observation["turn"])] = self._read(observation)
        planner, weights, disclosed = self._belief(observation, channel)
        turns_left = self.max_turns - int(observation["turn"])
        return planner.best_action(weights, int(observation["current_option"]), turns_left, disclosed)

    def _channel(self, observation: dict[str, Any]) -> StateChannel | GradedStateChannel | None:
        if ConcernStateTag.KEY in observation:
            return GradedStateChannel()
        return self.channel if any(key in observation for key in STATE_CHANNELS) else None

    def _read(self, observation: dict[str, Any]) -> bool | ConcernState:
        if ConcernStateTag.KEY not in observation:
            return reads_resolved(state_channel(observation, type(self).__name__))
        tag = observation[ConcernStateTag.KEY]
        if tag not in STATE_OF_LABEL:
            raise ValueError(
                f"planner: concern_state {tag!r} is none of the delivery labels {sorted(STATE_OF_LABEL)}"
            )
        return STATE_OF_LABEL[tag]

    def _belief(
        self, observation: dict[str, Any], channel: StateChannel | GradedStateChannel | None
    ) -> tuple[Planner, list[float], frozenset[int]]:
        """The planner of the first reading of the dialogue that leaves some user: the assumed
        feedback with the state readings, without them, then the other feedback likewise; with
        the users whose L1 the dialogue disclosed."""
        key = (observation["domain"], observation["options"])
        if key != self._episode_key:
            self._episode_key, self._planners = key, {}
        other = Feedback.EXPLICIT if self.feedback is Feedback.PROSODY else Feedback.PROSODY
        readings = ({},) if channel is None else (self._readings, {})
        fallback = None
        for feedback in (self.feedback, other):
            planner = self._planner(observation, feedback, channel)
            dialogue = DialogueView.parse(observation["transcript"], planner.model.lexicon)
            for heard in readings:
                weights, disclosed = planner.model.belief(dialogue, heard, channel or self.channel)
                if sum(weights) > 0:
                    return planner, weights, disclosed
            fallback = fallback or (planner, [1.0] * len(weights), frozenset())
        return fallback  # words no user would say: plan from the prior

    def _planner(
        self,
        observation: dict[str, Any],
        feedback: Feedback,
        channel: StateChannel | GradedStateChannel | None,
    ) -> Planner:
        if (feedback, channel) not in self._planners:
            model = UserModel.from_observation(observation, feedback)
            lookahead = None if channel is not None and not channel.exact else channel  # the docstring
            self._planners[feedback, channel] = Planner(model, self.turn_cost, self.reward, lookahead)
        return self._planners[feedback, channel]
