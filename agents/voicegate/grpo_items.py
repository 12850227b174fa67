"""VoiceGate's single-decision GRPO task: its items as rows, plain or paired, and the env's reward.

Pairs (VoxGate Eq. 1): a speaker-switch command said by the user (x+ ``same_speaker``, target:
its tool) and the same words after a speaker switch (x- ``switch``, target: ``[Mute]``). A text
model reads the transcript (access T), and the two sides have the same words, so no text model
can separate them; pairing pays off for a listening model. The text-only input of a command has
no pair and stays out, except in the ``voicegate_text_commands`` task, which adds every command's
text-only input as an ordinary item (``text_commands``). Side-talk and self-talk items are
ordinary groups.

``item_pairs`` plans the rows from item metadata alone; plain (``paired=False``) runs the very
same items, each side of a pair as its own ordinary row, so a plain control and a paired run see
the same items and the same target mix (half of the speaker-switch inputs mute).

``EnvReward``: the reward of a reply is the env's reward for it: the reply steps a text-action
VoiceGate env on its item (``reward="paper"``, the rule rewards of VoxGate section 5.2; one
definition, shared with PPO).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.llm.decision_reward import DecisionReward
from agents.training_material import decision_row
from agents.voicegate.llm import gate_messages
from hear_gym.core.registry import family
from hear_gym.envs.voicegate.family import ENV_ID
from hear_gym.envs.voicegate.items.generator import all_items

TRAIN_ACCESS = "T"
FAMILIES = ("speaker_switch", "side_talk", "self_talk")


def voicegate_families(families: Iterable[str] | None) -> tuple[str, ...]:
    """``families`` as a tuple of VoiceGate item families (None: all three; not empty, no unknown one)."""
    families = FAMILIES if families is None else tuple(families)
    if not families or set(families) - set(FAMILIES):
        raise ValueError(f"families must be some of {FAMILIES}, got {families}")
    return families


def item_pairs(
    split: str = "train",
    families=FAMILIES,
    paired: bool = False,
    limit: int | None = None,
    text_commands: bool = False,
) -> list[tuple[str, str]]:
    """(x+, x-) item ids of the first ``limit`` pairs or ordinary items of ``split`` (nothing
    rendered): paired, a same-speaker command with its switch; plain, the same items, each with
    itself (an ordinary group). ``text_commands``: the speaker-switch commands' text-only inputs
    too, as ordinary items (whether or not ``families`` holds ``speaker_switch``)."""
    items = {item.item_id: item for item in all_items()}
    read = (*families, "speaker_switch") if text_commands and "speaker_switch" not in families else families
    units = []
    for item_id in family(ENV_ID).item_ids(split, tuple(read)):
        item = items[item_id]
        if item.family.value != "speaker_switch":
            units.append((item_id, item_id))
        elif item.condition == "same_speaker" and "speaker_switch" in families:  # with its switch
            units.append((item_id, f"{item.group}/switch"))
        elif item.condition == "text_only" and text_commands:
            units.append((item_id, item_id))
    units = units[:limit]
    if paired:
        return units
    return [(side, side) for pair in units for side in dict.fromkeys(pair)]


def gate_rows(
    families=FAMILIES,
    paired: bool = False,
    split: str = "train",
    limit: int | None = None,
    text_commands: bool = False,
) -> list[dict[str, Any]]:
    """``item_pairs`` as GRPO rows, each prompt the text agent's own ``gate_messages`` under T."""
    pairs = item_pairs(split, families, paired, limit, text_commands)
    items = {item.item_id: item for item in all_items()}
    prompts = gate_prompts(list(dict.fromkeys(i for pair in pairs for i in pair)))
    return [
        decision_row(prompts[plus], plus, items[plus].family.value, prompts[minus], minus)
        for plus, minus in pairs
    ]


def gate_prompts(item_ids: list[str]) -> dict[str, list[dict[str, str]]]:
    """The text agent's own chat (``gate_messages``) for each item, under T."""
    env_family = family(ENV_ID)
    env = env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=item_ids)
    prompts = {}
    try:
        for item_id in item_ids:
            observation, _ = env.reset(options=env_family.reset_options(item_id))
            prompts[item_id] = gate_messages(observation)
    finally:
        env.close()
    return prompts


class EnvReward(DecisionReward):
    """The VoiceGate env's reward for a reply: the reply steps a text-action env on its item."""

    def __init__(self, item_ids, eos_token_ids) -> None:
        super().__init__(eos_token_ids)
        self.env_family = family(ENV_ID)
        self.env = self.env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=list(item_ids))

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        self.env.reset(options=self.env_family.reset_options(item_id))
        _, reward, _, _, info = self.env.step(reply)
        return float(reward), info["outcome"]["action"]["kind"] != "malformed"


# -- the task ----------------------------------------------------------------------------------
def check(settings) -> dict[str, Any]:
    families = voicegate_families(settings.families)
    if settings.env_options or settings.state_probe:
        raise ValueError(
            "env_options and state_probe are for the hear2act_assent task (VoiceGate's reward is fixed)"
        )
    if settings.paired and "speaker_switch" not in families:
        raise ValueError("paired GRPO pairs speaker-switch commands: include 'speaker_switch'")
    return {}


def build(settings, eos_token_ids: set[int], text_commands: bool = False):
    families = voicegate_families(settings.families)
    rows = gate_rows(families, settings.paired, limit=settings.item_limit, text_commands=text_commands)
    items = {r["item_id"] for r in rows} | {r["item_id_minus"] for r in rows}
    return rows, EnvReward(items, eos_token_ids)
