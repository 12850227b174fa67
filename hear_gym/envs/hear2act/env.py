"""``hear_gym/Hear2Act-v0``: multi-turn recommendation dialogue with hidden prioritized concerns.

An episode is one scenario. ``reset`` plays the standardized opening (the user's request, the
assistant recommending the surface-attractive option, the user's reaction), so the first
observation already holds three transcript lines and the turn counter is 1. Each ``step`` is one
assistant action (see ``hear2act_actions`` for the Discrete layout); the user answers through the
deterministic engine and the realizer. The episode ends when the assistant confirms an
option the user accepted in words, or when ``max_turns`` assistant turns (the opening included)
are used up; then the last recommendation is the final choice. Both ends are ``terminated``
(never ``truncated``): the protocol scores the outcome at the turn limit, so the episode has
ended there and has no continuation a trainer could bootstrap from (Gymnasium's truncation is
for limits outside the task). The episode record's ``turn_limit`` says which end it was.

Reward (``reward=``, ``turn_cost=``, ``invalid_action_penalty=``; ``REWARDS`` holds the formulas):

* ``"success"`` (default, the paper's 1st%): +1 when the episode ends on the gold option, else 0;
* ``"tiered"``: partial credit by the hidden concerns the final option meets, by priority:
  0.5 [meets L1] + 0.3 [meets L2] + 0.2 [meets L3], and 0 for an option over the stated budget
  (the gold meets all three: 1.0), so sparse success is not the only signal;
* each assistant turn after the opening subtracts ``turn_cost`` (default 0): with a cost, asking
  about every option before confirming no longer pays for itself;
* an invalid action adds ``invalid_action_penalty`` (default -0.1).

``patience=N`` (default None, an extension the paper does not have) gives the user a limit:
after N asks or clarifies about an option the user has already accepted genuinely, the user ends
the dialogue on it (see ``hear_gym.envs.hear2act.user.engine``).

Hidden users. By default (``hidden_users="bank"``) each scenario has the bank's one user.
``hidden_users="resample"`` (a training augmentation, not the paper's protocol) draws, at every
reset, a user among the scenario's *consistent* hidden (L2, L3) pairs (its own included): the
visible world makes them equally likely, so the gold may be any L1-feasible option
(``scenarios/twins.py``). A policy trained on the 288 training scenarios can otherwise learn
each one's gold from its option list instead of asking; evaluate on the bank's users. The reset
option ``hidden_user`` (a ``HiddenUser`` or its dict) plays one given twin of the scenario named
by ``item_id`` (a Hear2Act scenario is the env's item; ``scenario_id``, the option's previous
name, is still read, with a DeprecationWarning, for one release). Reset options are all checked before anything changes, so a failed reset
leaves the env as it was; a step after the episode ended raises ``EpisodeNotRunning``, whatever
the action format. On the last step
``info["episode"]["return"]`` is the episode's summed reward. Observations carry only what the user said and the candidate list;
the hidden concerns, gold, user-side states and concern state are in ``info``. On the last step
``info["episode"]`` holds the finished episode's record (every turn, counts for the metrics), as
``results.jsonl`` stores it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.env_checks import require_finite, require_running
from hear_gym.core.reset_options import with_current_names
from hear_gym.core.spaces import discrete_index
from hear_gym.core.text import text_space, to_charset
from hear_gym.envs.hear2act.actions import (
    N_ACTIONS,
    AssistantKind,
    InvalidAction,
    encode,
    utterance,
)
from hear_gym.envs.hear2act.metrics import episode_counts
from hear_gym.envs.hear2act.scenario_facts import INVALID_TEXT, shared_scenario_facts
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import DomainSchema
from hear_gym.envs.hear2act.scenarios.model import Scenario
from hear_gym.envs.hear2act.scenarios.twins import HiddenUser, draw_user, twin_scenario
from hear_gym.envs.hear2act.user.engine import (
    ActionKind,
    AssistantAction,
    Reaction,
)
from hear_gym.envs.hear2act.user.realizer import choose_delivery
from hear_gym.envs.hear2act.user.states import REQUEST_DELIVERY, Feedback

MIN_TURNS = 3
HIDDEN_USERS = ("bank", "resample")
RESET_OPTIONS = ("item_id", "hidden_user")
RENAMED_RESET_OPTIONS = {"scenario_id": "item_id"}  # the previous release's names, read for one release
MAX_ASSISTANT_CHARS = 1_000  # longer assistant utterances are cut in the transcript
_TRANSCRIPT_CHARS_PER_TURN = MAX_ASSISTANT_CHARS + 512  # + role prefixes and the user's reply


class Hear2ActEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        feedback: str = "prosody",
        split: str | None = "train",
        item_ids: Sequence[str] | None = None,
        assistant: str = "text",
        max_turns: int = 20,
        invalid_action_penalty: float = -0.1,
        reward: str = "success",
        turn_cost: float = 0.0,
        patience: int | None = None,
        hidden_users: str = "bank",
        render_mode: str | None = None,
        scenario_ids: Sequence[str] | None = None,
    ) -> None:
        require_finite(locals())
        if scenario_ids is not None:
            if item_ids is not None:
                raise ValueError(
                    "give the scenarios to play as item_ids (scenario_ids is its deprecated name), not both"
                )
            warnings.warn(
                "Hear2Act's scenario_ids is deprecated; use item_ids", DeprecationWarning, stacklevel=2
            )
            item_ids = scenario_ids
        self.feedback = _enum(Feedback, feedback, "feedback")
        self.assistant = _enum(AssistantKind, assistant, "assistant")
        if not isinstance(max_turns, int) or max_turns < MIN_TURNS:
            raise ValueError(
                f"max_turns must be an int >= {MIN_TURNS} (the opening is turn 1; with 2 "
                f"every episode would end after one step), got {max_turns!r}"
            )
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.scenarios = scenarios_for(None if item_ids is not None else split, item_ids)
        self._by_id: dict[str, Scenario] = {}  # a reset names its scenario: found without a scan
        for scenario in self.scenarios:
            self._by_id.setdefault(scenario.scenario_id, scenario)
        self.max_turns = max_turns
        if not isinstance(invalid_action_penalty, (int, float)) or isinstance(invalid_action_penalty, bool):
            raise ValueError(f"invalid_action_penalty must be a number, got {invalid_action_penalty!r}")
        self.invalid_action_penalty = float(invalid_action_penalty)
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {sorted(REWARDS)}, got {reward!r}")
        self.reward_name, self._final_reward = reward, REWARDS[reward]
        if not isinstance(turn_cost, (int, float)) or isinstance(turn_cost, bool) or turn_cost < 0:
            raise ValueError(f"turn_cost must be a number >= 0, got {turn_cost!r}")
        self.turn_cost = float(turn_cost)
        if patience is not None and (
            not isinstance(patience, int) or isinstance(patience, bool) or patience < 1
        ):
            raise ValueError(f"patience must be None or an int >= 1, got {patience!r}")
        self.patience = patience
        if hidden_users not in HIDDEN_USERS:
            raise ValueError(f"hidden_users must be one of {HIDDEN_USERS}, got {hidden_users!r}")
        self.hidden_users = hidden_users
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Dict(
            {
                "domain": text_space(64),
                "options": text_space(8_192),
                "attributes": text_space(1_024),
                "transcript": text_space(512 + max_turns * _TRANSCRIPT_CHARS_PER_TURN),
                "last_user_utterance": text_space(1_024),
                "turn": spaces.Discrete(max_turns + 1),
                "current_option": spaces.Discrete(12),
                "action_mask": spaces.MultiBinary(N_ACTIONS),
            }
        )
        self.scenario: Scenario | None = None
        self.turns: list[dict[str, Any]] = []
        self._facts = shared_scenario_facts(self.feedback, self.patience, self.assistant)

    # -- Gymnasium API --------------------------------------------------------------------
    def check_reset_options(self, options: dict) -> None:
        """Raises for reset options ``reset`` would refuse, changing nothing."""
        self._requested_scenario(with_current_names(options, RENAMED_RESET_OPTIONS, warn=False))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # Every option is checked before anything changes (the seed included), so a failed
        # reset leaves the env as it was.
        options = with_current_names(options or {}, RENAMED_RESET_OPTIONS)
        scenario = self._requested_scenario(options)
        super().reset(seed=seed)
        if scenario is None:
            scenario = self.scenarios[int(self.np_random.integers(len(self.scenarios)))]
        if self.hidden_users == "resample" and "hidden_user" not in options:
            scenario = twin_scenario(scenario.scenario_id, draw_user(scenario.scenario_id, self.np_random))
        self.scenario = scenario
        facts = self._scenario_facts = self._facts(scenario)
        self.domain: DomainSchema = facts.domain
        self._engine, self._mask = facts.engine, facts.mask
        self._options, self._attributes = facts.options, facts.attributes
        self._hidden_concerns = facts.hidden_concerns.copy()
        self.turn_count = 1
        self.episode_return = 0.0
        self.final_option: int | None = None
        self.turns = []
        self._transcript = f"User: {self.scenario.request}"
        self.turns.append(self._record(0, None, None, self.scenario.request, None, REQUEST_DELIVERY))

        self._state, reaction = self._engine.open()
        opening = AssistantAction(ActionKind.RECOMMEND, option=self.scenario.opening_option)
        self._exchange(opening, facts.moves[encode(opening, self.domain)].text, reaction)
        return self._observation(), self._info(None)

    def _requested_scenario(self, options: dict) -> Scenario | None:
        """The scenario the reset options name (the given twin with ``hidden_user``), or None
        when they name none (``reset`` draws one)."""
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; supported: {', '.join(RESET_OPTIONS)}"
            )
        if "item_id" not in options:
            if "hidden_user" in options:
                raise ValueError("reset option hidden_user needs item_id: it plays a twin of one scenario")
            return None
        wanted = options["item_id"]
        match = self._by_id.get(wanted) if isinstance(wanted, str) else None
        if match is None:
            raise ValueError(f"scenario {wanted!r} is not among this env's scenarios")
        if "hidden_user" in options:
            return twin_scenario(wanted, _hidden_user(options["hidden_user"]))
        return match

    def step(self, action):
        self._require_running()
        # A plain check, not Discrete.contains, which costs as much as the rest of a step.
        move = self._scenario_facts.moves[discrete_index(action, N_ACTIONS)]
        return self._advance(move.action, move.text)

    def step_decoded(self, action: AssistantAction | InvalidAction, assistant_text: str | None = None):
        """Advance one turn from an already decoded action (used by the text-action wrapper)."""
        self._require_running()
        if assistant_text is not None:
            assistant_text = to_charset(assistant_text)[:MAX_ASSISTANT_CHARS] or "[empty]"
        return self._advance(action, assistant_text)

    def _advance(self, action: AssistantAction | InvalidAction, assistant_text: str | None):
        """One turn; ``assistant_text`` None: the env's own words for ``action``."""
        self.turn_count += 1
        invalid = action.reason if isinstance(action, InvalidAction) else None
        if invalid is None:
            self._state, reaction = self._engine.respond(self._state, action)
        else:
            self._state, reaction = self._engine.respond_invalid(self._state)
        if assistant_text is None:
            assistant_text = self._assistant_text(action) if invalid is None else INVALID_TEXT
        self._exchange(action if invalid is None else None, assistant_text, reaction, invalid)

        confirmed = self._state.ended
        terminated = confirmed or self.turn_count >= self.max_turns  # scored at the limit: ended
        reward = (self.invalid_action_penalty if invalid else 0.0) - self.turn_cost
        if terminated:
            self.final_option = self._state.current_option
            reward += self._final_reward(self.scenario, self.final_option)
        self.episode_return += reward
        info = self._info(invalid)
        if terminated:
            info["episode"] = self._episode_record(confirmed)
        return self._observation(), reward, terminated, False, info

    def _require_running(self) -> None:
        started = self.scenario is not None
        require_running(started, started and (self._state.ended or self.final_option is not None))

    def _episode_record(self, confirmed: bool) -> dict[str, Any]:
        """The finished episode as ``results.jsonl`` stores it (every turn included). ``confirmed``:
        the user ended it on a confirmed option; otherwise the turn limit did (``turn_limit``)."""
        return {
            "item_id": self.scenario.scenario_id,
            "domain": self.scenario.domain,
            "final_option": self.final_option,
            "gold_option": self.scenario.gold_option,
            "success": self.final_option == self.scenario.gold_option,
            "return": self.episode_return,
            "terminated": True,
            "truncated": False,
            "turn_limit": not confirmed,
            "hidden_concerns": self._hidden_concerns,
            "counts": {
                **episode_counts(self.turns, self.final_option, self.scenario.gold_option, confirmed),
                "return": self.episode_return,
            },
            "turns": list(self.turns),
        }

    def action_masks(self) -> np.ndarray:
        """Valid actions for this episode's domain and action set (sb3-contrib convention)."""
        return self._mask.copy()

    def render(self):
        if self.render_mode == "ansi":
            return self._transcript + "\n"
        return None

    # -- helpers --------------------------------------------------------------------------
    def _exchange(
        self,
        action: AssistantAction | None,
        assistant_text: str,
        reaction: Reaction,
        invalid: str | None = None,
    ) -> None:
        user_text = self._scenario_facts.wording.realize(reaction, self.np_random)
        delivery = choose_delivery(reaction.state, self.np_random)
        self._transcript += f"\nAssistant: {assistant_text}\nUser: {user_text}"
        self.turns.append(
            self._record(self.turn_count, action, assistant_text, user_text, reaction, delivery, invalid)
        )

    def _record(
        self,
        turn: int,
        action: AssistantAction | None,
        assistant_text: str | None,
        user_text: str,
        reaction: Reaction | None,
        delivery: str,
        invalid: str | None = None,
    ) -> dict[str, Any]:
        state = self._state if reaction is not None else None
        return {
            "turn": turn,
            "action": None if turn == 0 else _action_record(action),
            "invalid_action": invalid,
            "assistant_text": assistant_text,
            "user_text": user_text,
            "reaction": _value(reaction and reaction.kind),
            "concern_state": _value(reaction and reaction.state),
            "delivery_label": delivery,
            "option_acceptance": _value(reaction and reaction.option_acceptance),
            "interaction_satisfaction": _value(reaction and reaction.interaction_satisfaction),
            "newly_disclosed": [] if reaction is None else list(reaction.disclosed),
            "disclosed": [] if state is None else sorted(state.disclosed),
            "current_option": None if state is None else state.current_option,
        }

    def _assistant_text(self, action: AssistantAction) -> str:
        if action.kind is ActionKind.CONFIRM:
            return self._scenario_facts.confirm_texts[self._state.current_option]
        return utterance(action, self.scenario, self.domain)

    def _observation(self) -> dict[str, Any]:
        return {
            "domain": self.domain.name,
            "options": self._options,
            "attributes": self._attributes,
            "transcript": self._transcript,
            "last_user_utterance": self.turns[-1]["user_text"],
            "turn": self.turn_count,
            "current_option": self._state.current_option,
            "action_mask": self._mask.copy(),
        }

    def _info(self, invalid: str | None) -> dict[str, Any]:
        last = self.turns[-1]
        info = {
            "item_id": self.scenario.scenario_id,
            "gold_option": self.scenario.gold_option,
            "hidden_concerns": self._hidden_concerns,
            "concern_state": last["concern_state"],
            "delivery_label": last["delivery_label"],
            "disclosed": last["disclosed"],
            "turn_record": last,
            "invalid_action": invalid,
        }
        if self.final_option is not None:
            info["final_option"] = self.final_option
            info["success"] = self.final_option == self.scenario.gold_option
        return info


def _hidden_user(value: HiddenUser | dict) -> HiddenUser:
    if isinstance(value, HiddenUser):
        return value
    try:
        return HiddenUser(**value)
    except TypeError:
        raise ValueError(
            f"hidden_user must be a HiddenUser or a dict of {sorted(HiddenUser.__dataclass_fields__)}, "
            f"got {value!r}"
        ) from None


def success_reward(scenario: Scenario, final_option: int) -> float:
    return float(final_option == scenario.gold_option)


TIER_WEIGHTS = (0.5, 0.3, 0.2)  # L1, L2, L3


def tiered_reward(scenario: Scenario, final_option: int) -> float:
    option = scenario.candidate(final_option)
    if option.price > scenario.budget.max_price:
        return 0.0
    return float(sum(w for w, met in zip(TIER_WEIGHTS, option.satisfies, strict=True) if met))


REWARDS = {"success": success_reward, "tiered": tiered_reward}

INVALID_KIND = "invalid"


def _action_record(action: AssistantAction | None) -> dict[str, Any]:
    """A decision turn's action, always in one shape (vector envs batch ``info`` values by type):
    ``kind`` (an ``ActionKind`` value, or ``"invalid"``), ``option`` (0 when the action names
    none) and ``attribute`` ("" for a general ask and for every other kind)."""
    if action is None:
        return {"kind": INVALID_KIND, "option": 0, "attribute": ""}
    return {"kind": action.kind._value_, "option": action.option or 0, "attribute": action.attribute or ""}


def _enum(enum_type, value, name: str):
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum_type)
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}") from None


def _value(member) -> str | None:
    # ``_value_`` (the sunder attribute Enum documents as the member's value) is a plain read;
    # ``.value`` goes through a descriptor, and every turn record reads five.
    return None if member is None else member._value_
