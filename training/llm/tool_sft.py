"""Supervised fine-tuning on whole tool-calling dialogues, the start of dialogue GRPO through TRL's
``environment_factory`` (``training.llm.dialogue_grpo``, ``interface="tools"``).

1. ``ToolSFTSettings``: the model folder (local, with a tool-calling chat template TRL can parse),
   the env whose experts demonstrate (its family's training material declares ``tool_demos``,
   ``agents.training_material.DemoSource``; Hear2Act: the state-aware agent under T+S), the env
   options the dialogues are played under, the optimizer, LoRA, the seed.
2. Each demonstration is one dialogue in TRL's tool-calling message format (the tool set's
   instruction, the reset observation, assistant tool calls, tool results, a closing reply).
   It is rendered with the model's chat template and the tools TRL offers for the env's factory
   (``hear_gym.integrations.trl.offered_tools``), so the text is the one GRPO's rollouts build,
   and tokenized once; the loss sees the assistant turns only (``assistant_masks``).
3. TRL's ``SFTTrainer`` trains on the pre-tokenized rows; ``final/`` holds the model (or adapter)
   and tokenizer in safetensors; ``curve.jsonl`` the loss (and W&B when ``wandb_project`` is set).

No held-out evaluation here: dialogue GRPO's base evaluation plays this model on held-out
scenarios through the same factory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.training_material import DemoSource, envs_with, training_material
from hear_gym.integrations.trl import environment_factory, offered_tools
from training.llm.common import model_init_kwargs, sft_arguments
from training.llm.demos import write_jsonl
from training.llm.run_folder import FINAL_DIR, finish_curve, start_curve
from training.llm.settings import SFTBaseSettings

DEMOS_FILE = "demos.jsonl"


# -- 1. settings ---------------------------------------------------------------------------------
@dataclass(kw_only=True)
class ToolSFTSettings(SFTBaseSettings):
    access: str | None = None  # None: the condition the family's experts demonstrate under
    batch_size: int = 4  # whole dialogues a step

    DEMOS = "tool_demos"

    def check(self) -> None:
        super().check()
        self.access = self.access or tool_demo_source(self.env_id).access


# -- 2. demonstrations, rendered and tokenized -----------------------------------------------------
def tool_demo_source(env_id: str) -> DemoSource:
    source = training_material(env_id).tool_demos
    if source is None:
        raise ValueError(f"tool-calling demonstrations exist for {envs_with('tool_demos')}, not {env_id!r}")
    return source


def tokenized_dialogue(tokenizer, messages: list[dict[str, Any]], tools: list) -> dict[str, list[int]]:
    """``input_ids`` of the rendered dialogue and ``assistant_masks`` (1 on every assistant turn's
    reply and its end-of-turn token, 0 on the rest), from the characters each turn renders to."""
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    spans = []
    for n in range(1, len(messages) + 1):  # each prefix of a chat renders to a prefix of its text
        if messages[n - 1]["role"] != "assistant":
            continue
        before = tokenizer.apply_chat_template(
            messages[: n - 1], tools=tools, tokenize=False, add_generation_prompt=True
        )
        upto = tokenizer.apply_chat_template(messages[:n], tools=tools, tokenize=False)
        end = upto.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)
        if not text.startswith(upto[:end]) or end <= len(before):
            raise ValueError("the chat template does not render a dialogue turn by turn")
        spans.append((len(before), end))
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    mask = [int(any(a <= lo and hi <= b for a, b in spans)) for lo, hi in encoded["offset_mapping"]]
    return {"input_ids": encoded["input_ids"], "assistant_masks": mask}


def demo_rows(settings: ToolSFTSettings, tokenizer) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    source = tool_demo_source(settings.env_id)
    demos = source.build(
        "train", access=settings.access, limit=settings.demo_limit, seed=settings.seed, **settings.env_options
    )
    tools = offered_tools(
        environment_factory(settings.env_id, access=settings.access, **settings.env_options)()
    )
    return demos, [tokenized_dialogue(tokenizer, d["messages"], tools) for d in demos]


# -- 3. the whole job ------------------------------------------------------------------------------
def train(settings: ToolSFTSettings) -> dict[str, Any]:
    """Build and tokenize the dialogues, fine-tune, save ``final/``; returns its folder and the
    number of dialogues and tokens."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    curve = start_curve(settings.out, settings.to_json(), settings.env_id, settings.wandb_project, False)
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            settings.model, trust_remote_code=settings.trust_remote_code
        )
        demos, rows = demo_rows(settings, tokenizer)
        write_jsonl(demos, settings.out / DEMOS_FILE)
        trainer = SFTTrainer(
            model=settings.model,
            args=SFTConfig(
                **sft_arguments(settings), max_length=None, model_init_kwargs=model_init_kwargs(settings)
            ),
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            peft_config=settings.lora.peft_config(),
            callbacks=[curve],
        )
        trainer.train(resume_from_checkpoint=curve.resume_from)
        final = settings.out / FINAL_DIR
        trainer.save_model(str(final))
        tokenizer.save_pretrained(str(final))
    finally:
        finish_curve(curve)
    return {"model": str(final), "dialogues": len(rows), "tokens": sum(len(r["input_ids"]) for r in rows)}


def train_tool_sft(**settings: Any) -> dict[str, Any]:
    """``train(ToolSFTSettings(**settings))``."""
    return train(ToolSFTSettings(**settings))
