"""Ambiguity's single-decision GRPO task (``ambiguity``): its single-turn episodes as rows, plain
or paired, and the env's reward.

Pairs: the two readings of a phonological minimal pair (x+ reading a, x- reading b). A text model
reads ``T-nopunct``, where the two sides show the same words and ask for different answers, so no
text model can separate them; pairing pays off only for a listener. Semantic, omission and
coreference episodes are ordinary groups; multi-turn dialogues are not single decisions and stay
out. Plain (``paired=False``) runs the same episodes, each its own row.

``EnvReward``: a reply's reward is the env's: it steps a text-action Ambiguity env on its episode
(+1 for the gold letter, 0 otherwise; ``hear_gym.envs.ambiguity.scoring``).
"""

from __future__ import annotations

from typing import Any

from agents.ambiguity.llm import ambiguity_messages
from agents.llm.decision_reward import DecisionReward
from agents.training_material import decision_row
from hear_gym.core.registry import family
from hear_gym.envs.ambiguity.family import ENV_ID
from hear_gym.envs.ambiguity.items.generator import episodes_by_id
from hear_gym.envs.ambiguity.items.model import Phenomenon

TRAIN_ACCESS = "T-nopunct"
PHENOMENA = ("phonological", "semantic", "omission", "coreference")


def ambiguity_phenomena(phenomena) -> tuple[str, ...]:
    """``phenomena`` as a tuple (None: every single-decision phenomenon; not empty, none unknown)."""
    chosen = PHENOMENA if phenomena is None else tuple(phenomena)
    if not chosen or set(chosen) - set(PHENOMENA):
        raise ValueError(f"families must be some of {PHENOMENA} (single-decision phenomena), got {chosen}")
    return chosen


def episode_pairs(split: str = "train", phenomena=PHENOMENA, paired: bool = False, limit: int | None = None):
    """(x+, x-) episode ids: paired, a minimal pair's two readings; otherwise each episode with itself."""
    by_id = episodes_by_id()
    units = []
    for episode_id in family(ENV_ID).item_ids(split):
        episode = by_id[episode_id]
        if episode.phenomenon.value not in phenomena:
            continue
        if episode.phenomenon == Phenomenon.PHONOLOGICAL:
            if episode_id.endswith("/a"):
                units.append((episode_id, f"{episode.item_id}/b"))
        else:
            units.append((episode_id, episode_id))
    units = units[:limit]
    if paired:
        return units
    return [(side, side) for pair in units for side in dict.fromkeys(pair)]


def ambiguity_prompts(item_ids: list[str]) -> dict[str, list[dict[str, str]]]:
    env_family = family(ENV_ID)
    env = env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=item_ids)
    try:
        return {e: ambiguity_messages(env.reset(options=env_family.reset_options(e))[0]) for e in item_ids}
    finally:
        env.close()


def ambiguity_rows(phenomena=PHENOMENA, paired: bool = False, split: str = "train", limit: int | None = None):
    pairs = episode_pairs(split, phenomena, paired, limit)
    by_id = episodes_by_id()
    prompts = ambiguity_prompts(list(dict.fromkeys(i for pair in pairs for i in pair)))
    return [
        decision_row(prompts[plus], plus, by_id[plus].phenomenon.value, prompts[minus], minus)
        for plus, minus in pairs
    ]


class EnvReward(DecisionReward):
    """The Ambiguity env's reward for a reply: the reply steps a text-action env on its episode."""

    def __init__(self, item_ids, eos_token_ids) -> None:
        super().__init__(eos_token_ids)
        self.env_family = family(ENV_ID)
        self.env = self.env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=list(item_ids))

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        self.env.reset(options=self.env_family.reset_options(item_id))
        _, reward, _, _, info = self.env.step(reply)
        return float(reward), info["invalid_action"] is None


def check(settings) -> dict[str, Any]:
    ambiguity_phenomena(settings.families)
    if settings.env_options or settings.state_probe:
        raise ValueError(
            "env_options and state_probe are for the hear2act_assent task (Ambiguity's reward is fixed)"
        )
    return {}


def build(settings, eos_token_ids: set[int]):
    rows = ambiguity_rows(ambiguity_phenomena(settings.families), settings.paired, limit=settings.item_limit)
    episodes = {r["item_id"] for r in rows} | {r["item_id_minus"] for r in rows}
    return rows, EnvReward(episodes, eos_token_ids)
