"""What VoiceGate gives the trainers (``agents.training_material``): its text chat agent, its gold
replies as SFT demonstrations under T, the ``voicegate`` GRPO task (``grpo_items``) and the text
its models read (the tiny models' corpus); for audio-language models under A+T (``audio_rows``),
its audio chat agent, the gold replies after the audio agent's chat, and the ``voicegate`` audio
GRPO task (same words, different audio)."""

from __future__ import annotations

import json
from functools import partial

from agents.audio_material import AudioDecisionTask, AudioDemoSource
from agents.training_material import DecisionTask, DemoSource, TrainingMaterial
from agents.voicegate import audio_rows, grpo_items
from agents.voicegate.demos import DEMO_ACCESS, voicegate_demos
from agents.voicegate.llm import AudioLLMGateAgent, LLMGateAgent


def instructions() -> list[str]:
    """The system instruction every VoiceGate prompt repeats: the gate's, with the tool inventory."""
    from agents.voicegate.llm import GATE_INSTRUCTION
    from hear_gym.envs.voicegate.items.pools import tool_inventory

    return [GATE_INSTRUCTION.format(tools=json.dumps(tool_inventory(), separators=(",", ":")))]


def corpus(max_items: int = 400) -> list[str]:
    """VoiceGate's instruction, tool inventory, item words and canonical replies."""
    from hear_gym.envs.voicegate.actions import MUTE_TOKEN, format_tool_call
    from hear_gym.envs.voicegate.items.generator import all_items

    texts = [*instructions(), MUTE_TOKEN]
    for item in all_items()[:max_items]:
        texts.append(item.transcript)
        texts += [format_tool_call(u.tool, u.params or {}) for u in item.utterances if u.tool]
    return texts


MATERIAL = TrainingMaterial(
    chat_agent=LLMGateAgent,
    demos=DemoSource(voicegate_demos, DEMO_ACCESS),
    grpo_tasks={
        "voicegate": DecisionTask(
            check=grpo_items.check,
            access=lambda settings: grpo_items.TRAIN_ACCESS,
            build=grpo_items.build,
            eval_options=lambda options: {},
        ),
        # the same items plus the speaker-switch commands' text-only inputs as ordinary rows:
        # tool targets a text model can read, which anchor tool calls while GRPO trains on the
        # families' harder decisions
        "voicegate_text_commands": DecisionTask(
            check=grpo_items.check,
            access=lambda settings: grpo_items.TRAIN_ACCESS,
            build=partial(grpo_items.build, text_commands=True),
            eval_options=lambda options: {},
        ),
    },
    corpus=corpus,
    instructions=instructions,
    audio_chat_agent=AudioLLMGateAgent,
    audio_demos=AudioDemoSource(check=audio_rows.check_audio_demos, build=audio_rows.audio_demos),
    audio_grpo_tasks={
        "voicegate": AudioDecisionTask(
            check=audio_rows.check_audio_task,
            build=audio_rows.build_audio_task,
            eval_options=lambda options: {},
        )
    },
    # the language-model trainers' default env and task (``voicegate``) when a run names none
    default_for=frozenset({"demos", "grpo_tasks", "audio_demos", "audio_grpo_tasks"}),
)
