"""VoiceGate's SFT demonstrations: the gold action of every item (``[Mute]``, the target tool's
call with the arguments its words specify, or an answer that names the assistant-directed
utterance's topic), each under the chat the text agent sends (``gate_messages``) for the
transcript condition T that text models read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.training_material import Demo, demo, seeded_sample
from agents.voicegate.llm import gate_messages
from hear_gym.core.registry import family
from hear_gym.envs.voicegate.actions import MUTE_TOKEN, format_tool_call
from hear_gym.envs.voicegate.family import ENV_ID
from hear_gym.envs.voicegate.items.generator import all_items
from hear_gym.envs.voicegate.items.model import Item, TargetKind

DEMO_ACCESS = "T"
TRAIN_FAMILIES = ("speaker_switch", "side_talk", "self_talk")


def gold_reply(item: Item) -> str:
    """The reply the paper's scoring counts as correct for ``item``."""
    target = item.target
    if target.kind is TargetKind.MUTE:
        return MUTE_TOKEN
    if target.kind is TargetKind.TOOL:
        spoken = next(u for u in item.utterances if u.tool == target.tool)
        return format_tool_call(target.tool, spoken.params or {})
    addressed = item.utterances[target.utterance]
    others = {w for u in item.utterances if u is not addressed for w in u.topic_words}
    # Words only the addressed utterance has (what the judge matches); one generated item asks
    # the same question twice, and then its shared words are all there is.
    topic = [w for w in addressed.topic_words if w not in others] or list(addressed.topic_words)
    return f"Here is what I can tell you about {' and '.join(topic)}."


def voicegate_demos(
    split: str = "train",
    access: str = DEMO_ACCESS,
    limit: int | None = None,
    seed: int = 0,
    families: Iterable[str] = TRAIN_FAMILIES,
    exclude_conditions: Iterable[str] = (),
    **env_options: Any,
) -> list[Demo]:
    """The gold reply of every ``split`` item of ``families`` under ``access``, except items in
    ``exclude_conditions`` (e.g. ``("switch",)``: the speaker-switch commands whose second voice a
    text model cannot read, their gold a mute its transcript does not show); ``limit`` of them drawn
    with ``seed`` (kept in item order) when given, from the items left."""
    excluded = {exclude_conditions} if isinstance(exclude_conditions, str) else set(exclude_conditions)
    env_family = family(ENV_ID)
    items = {item.item_id: item for item in all_items()}
    conditions = {item.condition for item in items.values()}
    if excluded - conditions:
        raise ValueError(
            f"exclude_conditions: unknown {sorted(excluded - conditions)}; known {sorted(conditions)}"
        )
    ids = [i for i in env_family.item_ids(split, tuple(families)) if items[i].condition not in excluded]
    env = env_family.make(access=access, actions="text", item_ids=ids, **env_options)
    demos = []
    try:
        for item_id in seeded_sample(ids, limit, seed):
            observation, _ = env.reset(options=env_family.reset_options(item_id))
            item = items[item_id]
            demos.append(
                demo(
                    gate_messages(observation),
                    gold_reply(item),
                    env_id=ENV_ID,
                    item_id=item_id,
                    family=item.family.value,
                    condition=item.condition,
                    group=item.group,
                )
            )
    finally:
        env.close()
    return demos
