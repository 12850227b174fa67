"""VoiceGate evaluation: one agent, every item of the chosen families, one decision each.

Results follow the project contract: ``results.jsonl`` (one decision per line, with the item's
ground truth, the reply, the parsed action and the outcome) and ``metadata.json`` (config,
headline metrics and condition tables with group-bootstrap CIs, provenance). A run folder that
already holds records for the same config is resumed: recorded items are skipped, nothing is
rewritten. Episodes are fixed by item, so greedy agents give identical files on every run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.progress import track

from hear_gym.envs.registration import make_voicegate
from hear_gym.eval.provenance import provenance
from hear_gym.eval.results import (
    CONFIG_FILE,
    METADATA_FILE,
    RESULTS_FILE,
    ResultsWriter,
    read_results,
    write_json_atomic,
)
from hear_gym.envs.voicegate.metrics import condition_table, headline_metrics
from hear_gym.envs.voicegate.scoring import Judge
from hear_gym.envs.voicegate.items.generator import GENERATOR_VERSION, conditions_of
from hear_gym.envs.voicegate.items.model import Addressee, Family, Item


@dataclass(frozen=True)
class GateRunConfig:
    agent: str
    families: tuple[str, ...] = ("speaker_switch", "side_talk", "self_talk")
    split: str | None = "test"
    access: str = "A+T"
    renderer: str = "espeak"
    seed: int = 0
    side_talk_cue: str = "none"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "families": list(self.families), "generator": GENERATOR_VERSION}


def command_tool(item: Item) -> str | None:
    """The tool the input's command words ask for: the trigger's, the self-talk core's, or the
    assistant-directed side-talk request's."""
    for utterance in reversed(item.utterances):
        if utterance.tool and utterance.addressee is not Addressee.BYSTANDER:
            return utterance.tool
    return None


def _check_config(out: Path, config: GateRunConfig) -> None:
    path = out / CONFIG_FILE
    if path.exists():
        recorded = json.loads(path.read_text("utf-8"))
        if recorded != config.as_dict():
            raise ValueError(f"{out} holds a run with a different config ({path}); use another --out")
    else:
        write_json_atomic(path, config.as_dict())


def run_gate_evaluation(
    agent,
    out: Path,
    config: GateRunConfig,
    audio_cache_dir: Path | None = None,
    judge: Judge | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on every item; returns all records of the run (resumed ones included)."""
    if config.access not in _accesses(agent):
        raise ValueError(f"agent {config.agent!r} reads {agent.required_access}, not {config.access}")
    out.mkdir(parents=True, exist_ok=True)
    _check_config(out, config)
    actions = getattr(agent, "action_format", "discrete")
    with ResultsWriter(out / RESULTS_FILE) as writer:
        for family in config.families:
            env = make_voicegate(
                config.access,
                actions,
                family=family,
                split=config.split,
                renderer=config.renderer,
                audio_cache_dir=audio_cache_dir,
                judge=judge,
                side_talk_cue=config.side_talk_cue,
            )
            base = env.unwrapped
            todo = [i for i, item in enumerate(base.items) if item.item_id not in writer.keys]
            for index in track(todo, description=f"{config.agent} {family}", disable=not progress):
                item = base.items[index]
                obs, _ = env.reset(seed=config.seed, options={"index": index})
                agent.reset(seed=config.seed)
                _, reward, _, _, info = env.step(agent.act(obs))
                writer.write(_record(item, info, reward, config))
            env.close()
    records = read_results(out / RESULTS_FILE)
    write_json_atomic(out / METADATA_FILE, summarize(records, config))
    return records


def _accesses(agent) -> tuple[str, ...]:
    access = agent.required_access
    return (access,) if isinstance(access, str) else tuple(access)


def _record(item: Item, info: dict, reward: float, config: GateRunConfig) -> dict[str, Any]:
    manifest = info.get("manifest")  # absent under access T, {} for text-only inputs
    return {
        "key": item.item_id,
        "agent": config.agent,
        "access": config.access,
        "item_id": item.item_id,
        "group": item.group,
        "family": item.family.value,
        "condition": item.condition,
        "split": item.split,
        "transcript": item.transcript,
        "target": info["item"]["target"],
        "command_tool": command_tool(item),
        "cues": item.cues,
        "reply": info["reply"],
        "outcome": info["outcome"],
        "reward": reward,
        "audio": {k: manifest[k] for k in ("duration_s", "pcm16_sha256")} if manifest else None,
    }


def summarize(records: list[dict[str, Any]], config: GateRunConfig) -> dict[str, Any]:
    tables = {}
    for family in Family:
        rows = [r for r in records if r["family"] == family.value]
        if rows:
            tables[family.value] = {
                c: {k: v.as_dict() if v else None for k, v in cells.items()}
                for c, cells in condition_table(rows, conditions_of(family)).items()
            }
    return {
        "config": config.as_dict(),
        "n_records": len(records),
        "metrics": {k: v.as_dict() for k, v in headline_metrics(records).items()},
        "conditions": tables,
        "provenance": provenance(),
    }
