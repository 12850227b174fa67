"""What VoiceGate gives the trainers (``agents.training_material``): its text chat agent, its gold
replies as SFT demonstrations under T, and the ``voicegate`` GRPO task (``grpo_items``)."""

from __future__ import annotations

from agents.training_material import DecisionTask, DemoSource, TrainingMaterial
from agents.voicegate import grpo_items
from agents.voicegate.demos import DEMO_ACCESS, voicegate_demos
from agents.voicegate.llm import LLMGateAgent

MATERIAL = TrainingMaterial(
    chat_agent=LLMGateAgent,
    demos=DemoSource(voicegate_demos, DEMO_ACCESS),
    grpo_tasks={
        "voicegate": DecisionTask(
            check=grpo_items.check,
            access=lambda settings: grpo_items.TRAIN_ACCESS,
            build=grpo_items.build,
            eval_options=lambda options: {},
        )
    },
)
