"""Option-list shortcuts: text-only policies that ask nothing and pick from what reset shows.

A skeptical reviewer's first attack on Hear2Act: can the gold be read off the option list? After
``reset`` an agent has seen the candidate list, the budget in the request, which option the
opening recommended and the hard constraint the user then stated. Each *scorer* below ranks the
options that are within budget and meet every stated need; ``OptionListShortcutAgent``
recommends the top one and confirms it (under prosody-mediated feedback the user assents to
any option that meets the hard constraint, so the pick is the episode's outcome).

* ``structure``: enumerates (L2, L3) dimension pairs consistent with the bank's construction
  rules (over the in-budget options, the patterns over (L1, L2, L3) are the eight patterns once
  each plus a second (met, met, missed), the safe alternative) and votes for the option meeting
  all three under each consistent pair;
* ``most_satisfied``: most dimensions described as satisfied;
* ``opening_overlap``: agrees with the surface-attractive opening on most dimensions;
* ``best_rated`` / ``cheapest``: the visible attributes.

``option_features`` turns the same view into per-option features (including the structural
votes) for a learned classifier; ``fit_option_classifier`` trains gradient-boosted trees on
them (scikit-learn, the ``dev`` extra). ``clarify_replies`` and ``lexical_accuracy`` are the
attack on the words of the user's replies to clarify. The tests bound all of these at near
chance on held-out scenarios; they are kept here so that anyone can rerun the attack.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.hear2act.lexicon import DialogueView, Lexicon, OptionView, domain_named, parse_options
from hear_gym.envs.hear2act.actions import CONFIRM, RECOMMEND0
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.model import Scenario
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction, UserEngine
from hear_gym.envs.hear2act.user.realizer import realize
from hear_gym.envs.hear2act.user.states import Feedback

ALL_PATTERNS = tuple(itertools.product((True, False), repeat=3))
SAFE_ALTERNATIVE = (True, True, False)


@dataclass(frozen=True)
class OptionListView:
    """Everything an agent has seen at reset, read with the domain's public vocabulary."""

    options: tuple[OptionView, ...]
    features: dict[int, dict[str, bool]]
    dimensions: tuple[str, ...]
    budget: float
    opening: int
    stated: frozenset[str]  # needs the user has said in words (after the opening: L1)

    @classmethod
    def from_observation(cls, observation: dict[str, Any]) -> OptionListView:
        lexicon = Lexicon(domain_named(observation["domain"]))
        options = parse_options(observation["options"])
        dialogue = DialogueView.parse(observation["transcript"], lexicon)
        if dialogue.budget is None:
            raise ValueError("the request states no budget; is this a Hear2Act reset observation?")
        return cls(
            options=options,
            features={o.option_id: lexicon.features(o.description) for o in options},
            dimensions=tuple(d.key for d in lexicon.domain.concern_dimensions),
            budget=dialogue.budget,
            opening=int(observation["current_option"]),
            stated=dialogue.stated_needs,
        )

    def in_budget(self) -> list[int]:
        return [o.option_id for o in self.options if o.price <= self.budget]

    def feasible(self) -> list[int]:
        """In budget and meeting every stated need: where the gold must be."""
        return [i for i in self.in_budget() if all(self.features[i].get(d, False) for d in self.stated)]

    def option(self, option_id: int) -> OptionView:
        return self.options[option_id - 1]


def construction_users(view: OptionListView, hard: Sequence[str]) -> list[tuple[tuple[str, str, str], int]]:
    """Every (L1, L2, L3) dimension triple, L1 among ``hard``, that the construction rules allow
    (over the in-budget options the patterns over the triple are the eight patterns once each
    plus a second (met, met, missed), and the opening misses L1), with its gold: the in-budget
    option meeting all three."""
    in_budget = view.in_budget()
    expected = sorted(ALL_PATTERNS + (SAFE_ALTERNATIVE,))
    users = []
    for l1 in hard:
        for l2, l3 in itertools.permutations([d for d in view.dimensions if d != l1], 2):
            triple = (l1, l2, l3)
            patterns = {i: tuple(view.features[i].get(d, False) for d in triple) for i in in_budget}
            if sorted(patterns.values()) != expected or patterns[view.opening][0]:
                continue
            users.append((triple, next(i for i, p in patterns.items() if all(p))))
    return users


def structural_votes(view: OptionListView) -> dict[int, int]:
    """Per feasible option, the number of (L1, L2, L3) triples consistent with the construction
    rules under which it is the option meeting all three."""
    votes = dict.fromkeys(view.feasible(), 0)
    for _triple, gold in construction_users(view, sorted(view.stated) or list(view.dimensions)):
        if gold in votes:
            votes[gold] += 1
    return votes


def _n_satisfied(view: OptionListView, option_id: int) -> int:
    return sum(view.features[option_id].values())


def _opening_overlap(view: OptionListView, option_id: int) -> int:
    opening = view.features[view.opening]
    return sum(view.features[option_id].get(d) == opening.get(d) for d in view.dimensions)


Scorer = Callable[[OptionListView], dict[int, float]]
SCORERS: dict[str, Scorer] = {
    "structure": lambda v: {i: float(n) for i, n in structural_votes(v).items()},
    "most_satisfied": lambda v: {i: float(_n_satisfied(v, i)) for i in v.feasible()},
    "opening_overlap": lambda v: {i: float(_opening_overlap(v, i)) for i in v.feasible()},
    "best_rated": lambda v: {i: v.option(i).rating for i in v.feasible()},
    "cheapest": lambda v: {i: -v.option(i).price for i in v.feasible()},
}


def top_options(scores: dict[int, float]) -> list[int]:
    """The options sharing the best score (a scorer that cannot separate them ties them)."""
    best = max(scores.values())
    return sorted(i for i, s in scores.items() if s == best)


def expected_hit(scores: dict[int, float], gold: int) -> float:
    """Probability of picking the gold when ties among the top options are broken at random."""
    top = top_options(scores)
    return 1.0 / len(top) if gold in top else 0.0


class OptionListShortcutAgent:
    """Recommends the top option of a scorer (ties: the lowest option id), then confirms."""

    required_access = "T"
    scorer = "structure"

    def reset(self, seed: int | None = None) -> None:
        self._pick: int | None = None

    def act(self, observation: dict[str, Any]) -> int:
        if self._pick is None:
            view = OptionListView.from_observation(observation)
            self._pick = top_options(SCORERS[self.scorer](view))[0]
        if int(observation["current_option"]) != self._pick:
            return RECOMMEND0 + self._pick - 1
        return CONFIRM


FEATURE_NAMES = (
    "price_vs_budget",
    "rating",
    "rating_rank",
    "price_rank",
    "n_satisfied",
    "satisfied_rank",
    "opening_overlap",
    "structural_vote_share",
    "is_top_structural",
)


def option_features(view: OptionListView) -> tuple[list[int], np.ndarray]:
    """(feasible option ids, one feature row per option in ``FEATURE_NAMES`` order)."""
    ids = view.feasible()
    votes = structural_votes(view)
    total_votes = sum(votes.values()) or 1
    top = set(top_options({i: float(n) for i, n in votes.items()}))

    def rank(values: Sequence[float]) -> list[float]:
        order = sorted(values, reverse=True)
        return [order.index(v) / max(len(values) - 1, 1) for v in values]

    ratings = [view.option(i).rating for i in ids]
    prices = [view.option(i).price for i in ids]
    satisfied = [float(_n_satisfied(view, i)) for i in ids]
    rows = np.array(
        [
            [
                view.option(i).price / view.budget,
                view.option(i).rating,
                r_rank,
                p_rank,
                n_sat,
                s_rank,
                _opening_overlap(view, i),
                votes[i] / total_votes,
                float(i in top),
            ]
            for i, r_rank, p_rank, n_sat, s_rank in zip(
                ids, rank(ratings), rank(prices), satisfied, rank(satisfied), strict=True
            )
        ],
        dtype=np.float64,
    )
    return ids, rows


def fit_option_classifier(views: Sequence[OptionListView], golds: Sequence[int], seed: int = 0):
    """Gradient-boosted trees (scikit-learn) predicting "is the gold" per feasible option."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    features, labels = [], []
    for view, gold in zip(views, golds, strict=True):
        ids, rows = option_features(view)
        features.append(rows)
        labels += [int(i == gold) for i in ids]
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=seed)
    return model.fit(np.vstack(features), np.array(labels))


def classifier_scores(model, view: OptionListView) -> dict[int, float]:
    ids, rows = option_features(view)
    return dict(zip(ids, model.predict_proba(rows)[:, 1].tolist(), strict=True))


def clarify_replies(
    scenarios: Sequence[Scenario], feedback: Feedback, seed: int = 0
) -> tuple[list[str], np.ndarray]:
    """The user's words when asked to clarify each in-budget option meeting L1, right after its
    recommendation, and whether that option is resolved (the gold) or not."""
    rng = np.random.default_rng(seed)
    texts, resolved = [], []
    for scenario in scenarios:
        domain, engine = domain_by_id(scenario.domain), UserEngine(scenario, feedback)
        opened, _ = engine.open()
        for cand in scenario.candidates:
            if cand.role == "violates_visible" or not cand.satisfies[0]:
                continue
            state, _ = engine.respond(opened, AssistantAction(ActionKind.RECOMMEND, option=cand.option_id))
            _, reply = engine.respond(state, AssistantAction(ActionKind.CLARIFY))
            texts.append(realize(reply, scenario, domain, rng))
            resolved.append(reply.state.resolved)
    return texts, np.array(resolved)


def lexical_accuracy(texts: Sequence[str], labels: np.ndarray) -> float:
    """5-fold balanced accuracy of a 1-2-gram logistic regression on the words alone."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    features = CountVectorizer(ngram_range=(1, 2)).fit_transform(texts)
    model = LogisticRegression(max_iter=2000, class_weight="balanced")
    return float(cross_val_score(model, features, labels, cv=5, scoring="balanced_accuracy").mean())
