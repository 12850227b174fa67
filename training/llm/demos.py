"""Demonstration files for supervised fine-tuning: ``write_jsonl`` / ``read_jsonl`` store a set;
``datasets.Dataset.from_list`` reads the same rows (TRL's conversational prompt-completion format).

Each demonstration is one decision: ``prompt`` (the system and user messages the agent's own
prompt builder makes from the observation) and ``completion`` (one assistant message, the
expert's reply in the env's text grammar), plus where it came from. Each family builds its own
(its training material's ``demos``, ``agents.training_material.DemoSource``): VoiceGate the gold
action of every item under T, Hear2Act the state-aware agent's decisions under T+S.
"""

from __future__ import annotations

import json
from pathlib import Path

from agents.training_material import Demo
from hear_gym.core.run_folder import strict_json, write_text_atomic


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
