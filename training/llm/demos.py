"""Demonstrations for supervised fine-tuning, written as exactly the chats the LLM agents send.

Each demonstration is one decision: ``prompt`` (the system and user messages the agent's own
prompt builder makes from the observation) and ``completion`` (one assistant message, the
expert's reply in the env's text grammar), plus where it came from. Experts hold the ground
truth, so the data teach the decision the benchmark scores:

* VoiceGate: the gold action of every item (``[Mute]``, the target tool's call with the
  arguments its words specify, or an answer that names the assistant-directed utterance's
  topic), under the transcript condition T that text models read.
* Hear2Act: every decision of the state-aware agent playing whole dialogues under a state
  channel (``T+S``: the ground-truth concern tag; ``T+S^`` with a state inferrer), each reply as
  the env writes it in the P6a grammar.

``write_jsonl`` / ``read_jsonl`` store a demonstration set; ``datasets.Dataset.from_list`` reads
the same rows (TRL's conversational prompt-completion format).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.hear2act.baselines import StateAwareAgent
from agents.hear2act.prompts import messages as hear2act_messages
from agents.voicegate.llm import gate_messages
from hear_gym.core.registry import family
from hear_gym.core.run_folder import strict_json, write_text_atomic
from hear_gym.envs.voicegate.actions import MUTE_TOKEN, format_tool_call
from hear_gym.envs.voicegate.items.generator import all_items
from hear_gym.envs.voicegate.items.model import Item, TargetKind

Demo = dict[str, Any]
VOICEGATE_ID = "hear_gym/VoiceGate-v0"
HEAR2ACT_ID = "hear_gym/Hear2Act-v0"


def _demo(prompt: list[dict[str, str]], reply: str, **source: Any) -> Demo:
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": reply}], **source}


# -- VoiceGate ---------------------------------------------------------------------------------
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
    split: str = "train", families: Iterable[str] = ("speaker_switch", "side_talk", "self_talk")
) -> list[Demo]:
    env_family = family(VOICEGATE_ID)
    ids = env_family.episode_ids(split, tuple(families))
    items = {item.item_id: item for item in all_items()}
    env = env_family.make(access="T", actions="text", item_ids=list(ids))
    demos = []
    try:
        for item_id in ids:
            observation, _ = env.reset(options=env_family.reset_options(item_id))
            item = items[item_id]
            demos.append(
                _demo(
                    gate_messages(observation),
                    gold_reply(item),
                    env_id=VOICEGATE_ID,
                    episode_id=item_id,
                    family=item.family.value,
                    condition=item.condition,
                    group=item.group,
                )
            )
    finally:
        env.close()
    return demos


# -- Hear2Act ----------------------------------------------------------------------------------
def hear2act_demos(
    split: str = "train",
    access: str = "T+S",
    limit: int | None = None,
    seed: int = 0,
    **env_options: Any,
) -> list[Demo]:
    """The state-aware agent's decisions over the first ``limit`` dialogues of ``split``; the
    dialogue of scenario ``k`` is played with seed ``seed + k``."""
    env_family = family(HEAR2ACT_ID)
    ids = env_family.episode_ids(split)[:limit]
    env = gym.make(HEAR2ACT_ID, access=access, split=split, disable_env_checker=True, **env_options)
    expert = StateAwareAgent()
    demos = []
    try:
        for k, scenario_id in enumerate(ids):
            demos.extend(_play(env, expert, scenario_id, seed + k, access))
    finally:
        env.close()
    return demos


def _play(env: gym.Env, expert, scenario_id: str, seed: int, access: str) -> list[Demo]:
    observation, _ = env.reset(seed=seed, options=family(HEAR2ACT_ID).reset_options(scenario_id))
    expert.reset(seed=seed)
    demos, done, turn = [], False, 0
    while not done:
        prompt = hear2act_messages(observation, "text")
        observation, _, terminated, truncated, info = env.step(expert.act(observation))
        done = terminated or truncated
        turn += 1
        demos.append(
            _demo(
                prompt,
                info["turn_record"]["assistant_text"],
                env_id=HEAR2ACT_ID,
                episode_id=scenario_id,
                access=access,
                turn=turn,
            )
        )
    return demos


DEMO_SOURCES: dict[str, Callable[..., list[Demo]]] = {
    VOICEGATE_ID: voicegate_demos,
    HEAR2ACT_ID: hear2act_demos,
}


# -- files -------------------------------------------------------------------------------------
def write_jsonl(demos: list[Demo], path: Path) -> Path:
    """``demos`` at ``path``, written atomically: never a half-written set under the real name,
    never through a symbolic link planted there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(strict_json(demo, sort_keys=True) + "\n" for demo in demos))
    return path


def read_jsonl(path: Path) -> list[Demo]:
    demos = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        try:
            demo = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(demo, dict) or not {"prompt", "completion"} <= demo.keys():
            raise ValueError(f"{path}:{n}: a demonstration needs 'prompt' and 'completion'")
        demos.append(demo)
    return demos
