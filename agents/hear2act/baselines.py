"""Rule-based Hear2Act baselines that differ only in how they judge resolution.

Both read the transcript with the domain lexicon, keep the options consistent with every need
the user has stated in words (and the budget), and recommend the best-rated of those. They
differ in one decision, whether the current option is resolved:

* ``TranscriptOnlyAgent`` (access T) acts on words only: an option that contradicts nothing the
  user has said is taken as resolved, so lexical acceptance ends the search.
* ``StateAwareAgent`` (access T+S, T+S^ or T+SER) reads the state channel as text: it confirms
  only when the channel reads as resolved and otherwise elicits (a general question, which
  reveals why the option is unresolved), moving on if elicitation brings nothing new. The same
  decision stage reads the ground-truth tag, an inferred sentence or a generic affect label;
  the reading (``reads_resolved``) is one word list, applied verbatim to each.
* ``AskBeforeConfirmAgent`` (access T) asks one general question about every option before
  confirming it, whatever the user sounded like.
* ``AskUntilDisclosedAgent`` (access T) is the cleverest rule-based transcript policy: it asks
  before confirming only while some of the user's three concerns is still unsaid. Once the user
  has stated three needs in words, an option meeting all of them is the gold, so it confirms
  without asking: the text-only way to save the turn a listener saves. (The planner,
  ``agents.hear2act.planner``, plans better still; it is the reference for learned policies.)
* ``AskUnlessResolvedAgent`` (access T+S, T+S^ or T+SER) is a listener with a safety net: it
  confirms at once when the state channel reads resolved and otherwise plays
  ``AskUntilDisclosedAgent``. A missed genuine acceptance costs it one turn, not the gold
  (``StateAwareAgent`` sets such an option aside). Against ``AskUntilDisclosedAgent`` it is the
  paper's rule comparison; what listening is worth is measured against ``planner@T``, with
  ``planner@T+S`` as the ceiling (``benchmarks/hear2act/listening_value.py``).
"""

from __future__ import annotations

import re
from typing import Any

from agents.hear2act.lexicon import DialogueView, Lexicon, OptionView, domain_named
from hear_gym.envs.hear2act.actions import ASK_GENERAL, CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.scenarios.model import CONCERN_LEVELS
from hear_gym.envs.hear2act.user.states import RESOLVED_DELIVERY_LABELS


class _RuleAgent:
    required_access = "T"

    def reset(self, seed: int | None = None) -> None:
        self._episode_key: tuple[str, str] | None = None
        self._set_aside: set[int] = set()  # options found unresolved; never recommended again

    def _setup(self, observation: dict[str, Any]) -> None:
        key = (observation["domain"], observation["options"])
        if key != getattr(self, "_episode_key", None):
            self._episode_key = key
            self.lexicon = Lexicon(domain_named(observation["domain"]))
            self.options, self.features = self.lexicon.option_table(observation["options"])

    def act(self, observation: dict[str, Any]) -> int:
        self._setup(observation)
        view = DialogueView.parse(observation["transcript"], self.lexicon)
        current = int(observation["current_option"])
        if not self._consistent(current, view):
            return self._recommend(view, exclude=self._set_aside | {current})
        if self.resolved(observation, view):
            return CONFIRM
        return self.elicit(observation, view, current)

    # -- the one decision the two agents disagree on --------------------------------------
    def resolved(self, observation: dict[str, Any], view: DialogueView) -> bool:
        raise NotImplementedError

    def elicit(self, observation: dict[str, Any], view: DialogueView, current: int) -> int:
        return ASK_GENERAL

    # -- shared machinery -----------------------------------------------------------------
    def _option(self, option_id: int) -> OptionView:
        return self.options[option_id - 1]

    def _consistent(self, option_id: int, view: DialogueView) -> bool:
        option = self._option(option_id)
        if view.budget is not None and option.price > view.budget:
            return False
        feats = self.features[option_id]
        return all(feats.get(need, False) for need in view.stated_needs)

    def _recommend(self, view: DialogueView, exclude: set[int]) -> int:
        pool = [
            o
            for o in self.options
            if o.option_id not in exclude and (view.budget is None or o.price <= view.budget)
        ]
        if not pool:
            return ASK_GENERAL

        def fit(o: OptionView) -> tuple:
            feats = self.features[o.option_id]
            met = sum(feats.get(need, False) for need in view.stated_needs)
            return (met, o.rating, -o.price, -o.option_id)

        return RECOMMEND0 + max(pool, key=fit).option_id - 1


class TranscriptOnlyAgent(_RuleAgent):
    """Acts on words only: nothing said against the option means it is resolved."""

    required_access = "T"

    def resolved(self, observation, view) -> bool:
        # A declined confirm is the one lexical signal that assent was never given.
        return view.last_assistant_kind != "confirm"


STATE_CHANNELS = ("concern_state", "inferred_state", "affect")
STATE_ACCESS = ("T+S", "T+S^", "T+SER")
# Words that say "this works for me"; everything else (including "unresolved") does not.
_POSITIVE = re.compile(r"\b(?:" + "|".join(sorted(RESOLVED_DELIVERY_LABELS | {"resolved", "happy"})) + r")\b")


def reads_resolved(text: str) -> bool:
    """The decision stage's reading of a state channel: a positive word, not negated."""
    lowered = text.lower()
    return bool(_POSITIVE.search(lowered)) and not re.search(r"\b(?:not|un\w*resolved)\b", lowered)


def state_channel(observation: dict[str, Any], agent: str) -> str:
    channel = next((observation[k] for k in STATE_CHANNELS if k in observation), None)
    if channel is None:
        raise KeyError(f"{agent} needs a state channel, one of {STATE_CHANNELS}")
    return channel


class StateAwareAgent(_RuleAgent):
    """Uses a state channel (T+S tag, T+S^ sentence or T+SER label) to decide between confirming
    and eliciting."""

    required_access = STATE_ACCESS

    def resolved(self, observation, view) -> bool:
        return reads_resolved(state_channel(observation, type(self).__name__))

    def elicit(self, observation, view, current: int) -> int:
        if current not in self._set_aside:
            self._set_aside.add(current)
            return ASK_GENERAL
        # Asked already and nothing new came out: try the next-best consistent option.
        return self._recommend(view, exclude=self._set_aside)


class AskBeforeConfirmAgent(_RuleAgent):
    """Transcript only, but cautious: before confirming an option it asks one general question
    about it. Shows what elicitation alone buys without any state channel, and what it costs."""

    required_access = "T"

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._asked: set[int] = set()

    def resolved(self, observation, view) -> bool:
        return int(observation["current_option"]) in self._asked

    def elicit(self, observation, view, current: int) -> int:
        self._asked.add(current)
        return ASK_GENERAL


class AskUntilDisclosedAgent(AskBeforeConfirmAgent):
    """``AskBeforeConfirmAgent`` that stops asking once the user has said three needs in words:
    every user hides exactly three concerns (L1-L3), so an option consistent with three stated
    needs meets them all. Transcript only."""

    def resolved(self, observation, view) -> bool:
        return len(view.stated_needs) >= len(CONCERN_LEVELS) or super().resolved(observation, view)


class AskUnlessResolvedAgent(AskUntilDisclosedAgent):
    """Confirms at once when the state channel reads resolved; otherwise plays
    ``AskUntilDisclosedAgent`` (it asks one general question about the option before confirming
    it, unless the user has said all three needs)."""

    required_access = STATE_ACCESS

    def resolved(self, observation, view) -> bool:
        heard = reads_resolved(state_channel(observation, type(self).__name__))
        return heard or super().resolved(observation, view)
