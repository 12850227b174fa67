"""What an Onset contrast group is (PACT-SLM section 3.2-3.3).

A *contrast group* is two source utterances with the same transcript, spoken by the same voice at
the same rate, whose deliveries license two different actions. A *source trajectory* is one of
them (one ``Branch``); an *item* (what one episode plays) is one trajectory under one rendering
(``clean``, or for the test split also ``noise15``); a *prefix record* is one of its five nested crops. Branch ids are
``a`` and ``b``, assigned to the two actions by a coin flip, so they never encode the action.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations

from hear_gym.envs.onset.actions import SOURCE_ACTIONS, WAIT

PREFIX_FRACTIONS: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0)
N_PREFIXES = len(PREFIX_FRACTIONS)
ONSET_FRACTIONS: tuple[float, ...] = (0.4, 0.6, 0.8)
SPLITS: tuple[str, ...] = ("train", "dev", "test")
CLEAN, NOISY = "clean", "noise15"
RENDERINGS: tuple[str, ...] = (CLEAN, NOISY)
BRANCH_IDS: tuple[str, ...] = ("a", "b")
ACTION_PAIRS: tuple[tuple[str, str], ...] = tuple(combinations(SOURCE_ACTIONS, 2))


@dataclass(frozen=True)
class Delivery:
    """eSpeak controls of one source utterance (final values, jitter applied)."""

    style: str
    pitch: float
    range: float
    contour: str


@dataclass(frozen=True)
class Branch:
    branch_id: str
    action: str
    delivery: Delivery


@dataclass(frozen=True)
class Group:
    group_id: str
    domain: str  # the paper's semantic family
    split: str
    transcript: str
    voice: str
    rate: int
    onset_index: int  # k*: the first prefix (0-based) whose target is the branch's action
    branches: tuple[Branch, Branch]

    @property
    def onset_fraction(self) -> float:
        return PREFIX_FRACTIONS[self.onset_index]

    @property
    def action_pair(self) -> tuple[str, str]:
        return pair_key(b.action for b in self.branches)

    @property
    def renderings(self) -> tuple[str, ...]:
        """Train and dev are clean only; test adds the held-out 15 dB noise rendering."""
        return RENDERINGS if self.split == "test" else (CLEAN,)

    def branch(self, branch_id: str) -> Branch:
        for branch in self.branches:
            if branch.branch_id == branch_id:
                return branch
        raise KeyError(f"{self.group_id} has no branch {branch_id!r}")

    def targets(self, branch_id: str) -> tuple[str, ...]:
        """Wait strictly before the onset, the branch's action at and after it."""
        action = self.branch(branch_id).action
        return tuple(WAIT if k < self.onset_index else action for k in range(N_PREFIXES))

    def item_ids(self) -> tuple[str, ...]:
        return tuple(item_id(self.group_id, b.branch_id, r) for b in self.branches for r in self.renderings)

    def as_record(self) -> dict:
        return {
            **{k: v for k, v in asdict(self).items() if k != "branches"},
            "onset_fraction": self.onset_fraction,
            "branches": [asdict(b) for b in self.branches],
        }


def pair_key(actions) -> tuple[str, str]:
    """An action pair in ``SOURCE_ACTIONS`` order (the order of ``ACTION_PAIRS``)."""
    return tuple(sorted(actions, key=SOURCE_ACTIONS.index))  # type: ignore[return-value]


def item_id(group_id: str, branch_id: str, rendering: str) -> str:
    return f"{group_id}/{branch_id}/{rendering}"


def parse_item_id(value: str) -> tuple[str, str, str]:
    """(group id, branch id, rendering) of an item id such as ``book_uncertainty-03/a/clean``."""
    parts = value.split("/")
    if len(parts) != 3 or parts[1] not in BRANCH_IDS or parts[2] not in RENDERINGS:
        raise ValueError(f"not an Onset item id: {value!r} (expected GROUP/a|b/clean|noise15)")
    return parts[0], parts[1], parts[2]
