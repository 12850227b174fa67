"""A numeric observation for Stable-Baselines3, built per access condition.

``FeatureObservation`` turns the dict observation into a Dict of float32 Box leaves
(``MultiInputPolicy``). Every access condition gets the public side of the dialogue; each adds
exactly the channel it grants (``ACCESS_CHANNELS``), so a policy under T never receives
anything computed from audio and nothing is rendered for it:

======  ===============================================================================
T       dialogue, options, user_words, option_fit
A       dialogue, options, prosody, prosody_vs_request (the user's words are hidden)
A+T     dialogue, options, user_words, option_fit, prosody, prosody_vs_request
T+S     dialogue, options, user_words, option_fit, concern_state
T+S^    dialogue, options, user_words, option_fit, inferred_state
T+SER   dialogue, options, user_words, option_fit, affect
======  ===============================================================================

Leaves (``action_mask`` always):

* ``dialogue``: turn / max_turns; current option one-hot (11); options recommended so far (11);
  share of turns spent on ask / clarify / recommend / confirm / invalid (5); last action kind (5).
* ``options``: per option (11 rows of ``OPTION_COLUMNS``, flattened row by row, as SB3 expects
  1-D vectors): price / stated budget, rating / 5, then per attribute slot (8) +1 if the
  description says the option meets it, -1 if it says it misses it, 0 otherwise.
* ``user_words``: what the user's words say, as a perfect reader of the transcript would code
  it: the lexical kind of the latest user turn (one-hot over ``ReactionKind``; e.g. every
  prosody-mediated assent is the same ``shared_assent``), the attribute slots whose need the user
  has stated in words, and those the user called unimportant (8 + 8). Priorities are never coded.
* ``option_fit``: per option (11 rows of ``FIT_COLUMNS``, then the current option's row again),
  what the same reader concludes by holding the option list against those words: 1 if the
  option is within budget and its description meets every stated need; the share of stated
  needs it meets (1 when none is stated); 1 if the assistant has asked or clarified while it was
  the current option. It adds no information to ``options``, ``user_words`` and ``dialogue`` (it
  is a function of them), but spares a small policy from learning an 11 x 8 matching by trial
  and error.
* ``prosody`` / ``prosody_vs_request``: ``FEATURE_NAMES`` of the current user turn's audio, and
  the same minus those of the user's opening request (the same speaker's neutral voice).
* ``concern_state``: one-hot over the delivery labels of the T+S tag (after any intervention).
* ``inferred_state``: the T+S^ sentence as a hashed bag of words (``HASH_BINS`` bins).
* ``affect``: one-hot over the generic affect labels of T+SER.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.text import hashed_words
from hear_gym.envs.hear2act.actions import N_ACTIONS
from hear_gym.envs.hear2act.audio import AFFECT_LABELS, TurnAudio
from hear_gym.envs.hear2act.scenarios.domain_schema import MAX_CONCERN_DIMENSIONS
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES
from hear_gym.envs.hear2act.user.engine import ReactionKind
from hear_gym.envs.hear2act.user.states import ALL_DELIVERY_LABELS
from hear_gym.speech.features import N_FEATURES
from hear_gym.speech.renderers import RenderRequest

ACTION_KINDS = ("ask", "clarify", "recommend", "confirm", "invalid")
DIALOGUE_SIZE = 1 + 2 * N_CANDIDATES + 2 * len(ACTION_KINDS)
REACTION_KINDS = tuple(ReactionKind)
WORDS_SIZE = len(REACTION_KINDS) + 2 * MAX_CONCERN_DIMENSIONS
OPTION_COLUMNS = 2 + MAX_CONCERN_DIMENSIONS
FIT_COLUMNS = 3
FIT_SIZE = (N_CANDIDATES + 1) * FIT_COLUMNS
# Where each part of the dialogue and user_words leaves starts.
_CURRENT, _RECOMMENDED = 1, 1 + N_CANDIDATES  # options are 1-based: option o at _CURRENT + o - 1
_SHARES = _RECOMMENDED + N_CANDIDATES
_LAST_KIND = _SHARES + len(ACTION_KINDS)
_STATED = len(REACTION_KINDS)
_UNIMPORTANT = _STATED + MAX_CONCERN_DIMENSIONS
HASH_BINS = 32
FEATURE_MEMO_SIZE = 50_000  # prosodic feature vectors kept per env (24 floats each)
_BIG = np.float32(1e4)

ACCESS_CHANNELS: dict[str, tuple[str, ...]] = {
    "T": ("user_words",),
    "A": ("audio",),
    "A+T": ("user_words", "audio"),
    "T+S": ("user_words", "concern_state"),
    "T+S^": ("user_words", "inferred_state"),
    "T+SER": ("user_words", "affect"),
}


_REACTION_INDEX = {kind.value: i for i, kind in enumerate(REACTION_KINDS)}
_NOT_IMPORTANT = ReactionKind.ANSWER_NOT_IMPORTANT.value
_KIND_INDEX = {kind: i for i, kind in enumerate(ACTION_KINDS)}
_RECOMMEND = _KIND_INDEX["recommend"]
_ASKING = (_KIND_INDEX["ask"], _KIND_INDEX["clarify"])


@dataclass(frozen=True)
class _ScenarioLayout:
    """A scenario's visible world as the features read it: the ``options`` leaf, the slot of
    each concern dimension, and per candidate whether it fits the budget and which dimensions
    its description says it meets."""

    options: np.ndarray
    slots: dict[str, int]
    fits_budget: tuple[bool, ...]
    meets: tuple[frozenset[str], ...]
    _fit_columns: dict[frozenset[str], np.ndarray] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, scenario, domain) -> _ScenarioLayout:
        budget = scenario.budget.max_price
        described = [domain.described(cand.description) for cand in scenario.candidates]
        rows = np.zeros((N_CANDIDATES, OPTION_COLUMNS), dtype=np.float32)
        for row, cand, says in zip(rows, scenario.candidates, described, strict=True):
            row[:2] = cand.price / budget, cand.rating / 5.0
            for slot, dim in enumerate(domain.concern_dimensions):
                row[2 + slot] = {True: 1.0, False: -1.0}.get(says.get(dim.key), 0.0)
        return cls(
            rows.reshape(-1),
            {dim.key: i for i, dim in enumerate(domain.concern_dimensions)},
            tuple(cand.price <= budget for cand in scenario.candidates),
            tuple(frozenset(key for key, met in says.items() if met) for says in described),
        )

    def fit_columns(self, needs: frozenset[str]) -> np.ndarray:
        """``option_fit`` for the options (ids 1..11 in order) against the stated ``needs``,
        with 0 where the caller marks the options asked about and the current option's row
        (shared: callers copy it). Kept per set of needs: a dialogue states at most three, so a
        scenario has few such sets."""
        columns = self._fit_columns.get(needs)
        if columns is None:
            n, values = len(needs), []
            for fits_budget, meets in zip(self.fits_budget, self.meets, strict=True):
                met = len(needs & meets)
                values += (float(fits_budget and met == n), met / n if n else 1.0, 0.0)
            columns = self._fit_columns[needs] = np.array(values + [0.0] * FIT_COLUMNS, dtype=np.float32)
        return columns


@dataclass
class _EpisodeTally:
    """Running totals of one episode's assistant turns (``turns[1:]``), brought up to date from
    the turns added since the last observation, and what the episode's scenario fixes for the
    features: its visible world's ``layout`` and the attribute of each concern level. The parts
    of the ``dialogue`` and ``user_words`` leaves that only change with new turns are kept
    written into templates, which each step copies and completes."""

    turns: list[dict]  # the episode's own list: a reset starts a new one
    layout: _ScenarioLayout
    attributes: dict[str, str]  # concern level -> attribute (twins differ here, not in layout)
    seen: int = 1  # records read; turns[0] is the user's opening request
    kinds: list[int] = field(default_factory=lambda: [0] * len(ACTION_KINDS))  # per ACTION_KINDS
    asked: set[int] = field(default_factory=set)  # options current while asking or clarifying
    dialogue: np.ndarray = field(default_factory=lambda: np.zeros(DIALOGUE_SIZE, dtype=np.float32))
    user_words: np.ndarray = field(default_factory=lambda: np.zeros(WORDS_SIZE, dtype=np.float32))
    _last_kind: int | None = None

    @property
    def actions(self) -> int:
        return self.seen - 1

    def update(self) -> None:
        for record in self.turns[self.seen :]:
            action = record["action"]
            kind = _KIND_INDEX[action["kind"] if action else "invalid"]
            self.kinds[kind] += 1
            if self._last_kind is not None:
                self.dialogue[_LAST_KIND + self._last_kind] = 0.0
            self.dialogue[_LAST_KIND + kind] = 1.0
            self._last_kind = kind
            if kind == _RECOMMEND:
                self.dialogue[_RECOMMENDED + action["option"] - 1] = 1.0
            elif kind in _ASKING:  # asking never changes the current option
                self.asked.add(record["current_option"])
            if record["reaction"] == _NOT_IMPORTANT:
                self.user_words[_UNIMPORTANT + self.layout.slots[action["attribute"]]] = 1.0
        self.seen = len(self.turns)


@dataclass(frozen=True)
class Channel:
    """Observation leaves one access channel adds, and how to compute them."""

    spaces: dict[str, spaces.Box]
    encode: Callable[[FeatureObservation, dict], dict[str, np.ndarray]]


def _one_hot(labels: tuple[str, ...], value: str) -> np.ndarray:
    out = np.zeros(len(labels), dtype=np.float32)
    out[labels.index(value)] = 1.0
    return out


def _box(shape: tuple[int, ...], low: float = 0.0, high: float = 1.0) -> spaces.Box:
    return spaces.Box(np.float32(low), np.float32(high), shape, np.float32)


CHANNELS: dict[str, Channel] = {
    "user_words": Channel(
        {"user_words": _box((WORDS_SIZE,)), "option_fit": _box((FIT_SIZE,))},
        lambda w, obs: {"user_words": w.user_words(), "option_fit": w.option_fit(int(obs["current_option"]))},
    ),
    "audio": Channel(
        {"prosody": _box((N_FEATURES,), -_BIG, _BIG), "prosody_vs_request": _box((N_FEATURES,), -_BIG, _BIG)},
        lambda w, obs: w.prosody(),
    ),
    "concern_state": Channel(
        {"concern_state": _box((len(ALL_DELIVERY_LABELS),))},
        lambda w, obs: {"concern_state": _one_hot(ALL_DELIVERY_LABELS, obs["concern_state"])},
    ),
    "inferred_state": Channel(
        {"inferred_state": _box((HASH_BINS,))},
        lambda w, obs: {"inferred_state": hashed_words(obs["inferred_state"], HASH_BINS)},
    ),
    "affect": Channel(
        {"affect": _box((len(AFFECT_LABELS),))},
        lambda w, obs: {"affect": _one_hot(AFFECT_LABELS, obs["affect"])},
    ),
}


class FeatureObservation(gym.ObservationWrapper):
    def __init__(self, env: gym.Env, access: str, audio: Callable[[], TurnAudio]) -> None:
        """``audio`` builds the env stack's ``TurnAudio``; called only if ``access`` hears audio."""
        super().__init__(env)
        try:
            self.channels = ACCESS_CHANNELS[access]
        except KeyError:
            raise ValueError(
                f"no feature channels for access {access!r}; known: {sorted(ACCESS_CHANNELS)}"
            ) from None
        self.audio = audio() if "audio" in self.channels else None
        self._base = env.unwrapped  # read at every step: not looked up through the stack each time
        self._features: dict[RenderRequest, np.ndarray] = {}
        # Reading every turn and every option description at every step was most of a T step:
        # the features keep the scenario's numbers and the episode's running totals instead.
        self._layouts: dict[str, _ScenarioLayout] = {}  # by scenario id: a bank holds hundreds
        self._episode: _EpisodeTally | None = None
        leaves = {
            "dialogue": _box((DIALOGUE_SIZE,)),
            "options": _box((N_CANDIDATES * OPTION_COLUMNS,), -1.0, _BIG),
        }
        for name in self.channels:
            leaves.update(CHANNELS[name].spaces)
        leaves["action_mask"] = _box((N_ACTIONS,))
        self.observation_space = spaces.Dict(leaves)

    def observation(self, obs: dict) -> dict:
        self._catch_up()
        out = {"dialogue": self._dialogue(int(obs["current_option"])), "options": self._options()}
        for name in self.channels:
            out.update(CHANNELS[name].encode(self, obs))
        out["action_mask"] = np.asarray(obs["action_mask"], dtype=np.float32)
        return out

    # -- channels -------------------------------------------------------------------------
    # The channels read the episode as of the last ``_catch_up`` (``observation`` calls it first).
    def user_words(self) -> np.ndarray:
        tally, last = self._episode, self._base.turns[-1]
        out = tally.user_words.copy()  # the attributes called unimportant already marked
        out[_REACTION_INDEX[last["reaction"]]] = 1.0
        for level in last["disclosed"]:  # needs said in words, whatever their priority
            out[_STATED + tally.layout.slots[tally.attributes[level]]] = 1.0
        return out

    def option_fit(self, current_option: int) -> np.ndarray:
        tally = self._episode
        needs = frozenset(tally.attributes[level] for level in self._base.turns[-1]["disclosed"])
        out = tally.layout.fit_columns(needs).copy()
        for option in tally.asked:
            out[option * FIT_COLUMNS - 1] = 1.0  # the last column of the option's row
        current = (current_option - 1) * FIT_COLUMNS
        out[-FIT_COLUMNS:] = out[current : current + FIT_COLUMNS]  # the current option's row again
        return out

    def _catch_up(self) -> None:
        """Brings the episode's running totals up to date (a reset starts a new turn list, and
        with it a new tally)."""
        turns = self._base.turns
        if self._episode is None or self._episode.turns is not turns or len(turns) < self._episode.seen:
            scenario = self._base.scenario
            self._episode = _EpisodeTally(
                turns, self._layout(scenario), {c.level: c.attribute for c in scenario.concerns}
            )
        self._episode.update()

    def _layout(self, scenario) -> _ScenarioLayout:
        """The visible world's numbers, built once per scenario id (twins share their visible
        world: the same budget and options)."""
        layout = self._layouts.get(scenario.scenario_id)
        if layout is None:
            layout = self._layouts[scenario.scenario_id] = _ScenarioLayout.of(scenario, self._base.domain)
        return layout

    def prosody(self) -> dict[str, np.ndarray]:
        current, request = self._turn_features(-1), self._turn_features(0)
        return {
            "prosody": np.clip(current, -_BIG, _BIG).astype(np.float32),
            "prosody_vs_request": np.clip(current - request, -_BIG, _BIG).astype(np.float32),
        }

    def _turn_features(self, turn: int) -> np.ndarray:
        """Prosodic features of a user turn, memoized by its render request: a request renders
        to the same waveform every time, and the opening request is measured at every step."""
        request = self.audio.request(self.env, turn)
        features = self._features.get(request)
        if features is None:
            if len(self._features) >= FEATURE_MEMO_SIZE:
                self._features.clear()
            features = self._features[request] = self.audio.cache.prosodic_features(request)
        return features

    # -- always present -------------------------------------------------------------------
    def _dialogue(self, current_option: int) -> np.ndarray:
        base, tally = self._base, self._episode
        out = tally.dialogue.copy()  # options recommended and the last action kind already marked
        out[0] = base.turn_count / base.max_turns
        out[_CURRENT + current_option - 1] = 1.0
        for i, count in enumerate(tally.kinds):
            out[_SHARES + i] = count / tally.actions
        return out

    def _options(self) -> np.ndarray:
        """The visible option list in numbers (fixed for an episode)."""
        return self._episode.layout.options.copy()
