"""Run by ``test_grpo.py`` under ``torchrun --nproc_per_node 2`` (CPU, gloo): paired GRPO with
one group split across the two processes; each process records the items its reward saw."""

import json
import os
import sys
from pathlib import Path

from agents.voicegate.grpo_items import EnvReward
from training.llm.grpo import train_grpo

out, model = Path(sys.argv[1]), sys.argv[2]
seen = out.parent / f"seen_{os.environ['RANK']}.jsonl"
score = EnvReward.__call__


def recording(self, completions, completion_ids, item_id, item_family, **kwargs):
    with seen.open("a") as f:
        f.write(json.dumps(list(item_id)) + "\n")
    return score(self, completions, completion_ids, item_id, item_family, **kwargs)


EnvReward.__call__ = recording
train_grpo(
    out=out,
    model=model,
    paired=True,
    families=("speaker_switch",),
    item_limit=8,
    num_generations=4,
    batch_size=2,  # x 2 processes = one group of 4 per step
    max_steps=2,
    max_completion_length=8,
    lora={"enabled": False},
    evaluation={"limit": 1, "base": False, "families": ("speaker_switch",)},
    wandb_project=None,
    progress=False,
)
