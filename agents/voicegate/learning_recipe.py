"""Settings under which SFT and GRPO teach a small model built from scratch
(``training.tiny_model.LEARNING_LM``) VoiceGate on CPU: what the learning tier asserts
(``tests/training/test_llm_learning.py``) and ``benchmarks/llm/post_training.py`` measures.
Keyword arguments of ``train_sft`` and ``train_grpo`` besides ``out`` and ``model``.

SFT teaches the reply grammar from VoiceGate's gold actions, leaving out the switched commands:
their gold is a mute whose only cue is a second voice, which a text model cannot read, so they
teach it to mute some commands at random. The GRPO study (``VOICEGATE_GRPO``) then trains on
side- and self-talk with the commands' text-only inputs as ordinary rows (task
``voicegate_text_commands``: tool targets a text model can read, which keep tool calls from
eroding), 400 steps of 64 completions at lr 3e-4: it raises held-out side-talk reward, not the
reward on every item (benchmarks/llm/post_training.md).
Sampling at temperature 0.7 keeps tool calls well-formed; at 1.0 sampled calls break, their
malformed penalty teaches the model to drop tool calls. ``VOICEGATE_GRPO_CHECK`` is the learning
tier's short GRPO run.
"""

from __future__ import annotations

# All weights are trained: LoRA on the attention of a random model cannot teach it a grammar.
FULL_WEIGHTS = {"enabled": False}
VOICEGATE_SFT = {
    "env_id": "hear_gym/VoiceGate-v0",
    "demo_limit": 800,  # a seeded sample of the 1,136 train demonstrations left, all three families
    # without the switched commands: their gold is a mute whose cue (a second voice) a text model
    # cannot read, so they teach it to mute commands at random, and GRPO then had nothing to gain
    "demo_options": {"exclude_conditions": ("switch",)},
    "epochs": 6.0,  # gen-3 items: 4 epochs left 92.5% of held-out replies ended and valid
    "learning_rate": 3e-3,
    "batch_size": 16,
    "lora": FULL_WEIGHTS,
    "evaluation": {"split": "test", "base": False, "batch_size": 64},  # every held-out item
}
VOICEGATE_GRPO = {
    # side- and self-talk, with the commands' text-only inputs as ordinary rows (tool targets a
    # text model can read, which keep tool calls from eroding)
    "task": "voicegate_text_commands",
    "families": ("side_talk", "self_talk"),
    "num_generations": 8,
    "batch_size": 64,
    "max_steps": 400,  # 80 steps of 64 left held-out side-talk where it was
    "max_completion_length": 48,
    "learning_rate": 3e-4,
    "temperature": 0.7,
    "lora": FULL_WEIGHTS,
    # base: the SFT model on the same items, for the paired lift; every held-out item
    "evaluation": {"split": "test", "base": True, "batch_size": 64},
}
# The learning tier's GRPO check (tests/training/test_llm_learning.py): the recipe's task on
# self-talk (with the commands' text-only inputs as rows), 24 steps of 32 completions, evaluated
# on held-out self-talk. Self-talk is what a text model can read (its frames: "I have to remember
# to ..."); on gen-4 side-talk the SFT model already answers the questions, and what is left
# (which tool, and whom an unnamed request is for) a text model cannot read, so 24 or 48 steps
# left held-out side-talk where it was (docs/post-training.md). It detects a GRPO trainer that stops
# learning in about two minutes; it is not evidence of a gain on every family.
VOICEGATE_GRPO_CHECK = {
    **VOICEGATE_GRPO,
    "families": ("self_talk",),
    "batch_size": 32,
    "max_steps": 24,
    # the final model's greedy replies (the test samples the SFT and GRPO models itself)
    "evaluation": {"split": "test", "families": ("self_talk",), "base": False, "batch_size": 64},
}
# Plain vs paired GRPO (benchmarks/llm/post_training.py) starts from this SFT model: switched
# commands included, the model its figures were measured from.
VOICEGATE_PAIRING_SFT = {k: v for k, v in VOICEGATE_SFT.items() if k != "demo_options"}
# Plain vs paired GRPO (benchmarks/llm/post_training.py): the GRPO recipe on the speaker-switch
# pairs, paired groups or the same items as ordinary groups, same budget; both play the held-out
# speaker-switch inputs (a command, its switched twin, its text-only input).
VOICEGATE_PAIRING = {
    "task": "voicegate",
    "families": ("speaker_switch",),
    "num_generations": 4,
    "batch_size": 16,
    "max_steps": 40,
    "max_completion_length": 48,
    "learning_rate": 1e-4,
    "temperature": 0.7,
    "lora": FULL_WEIGHTS,
    "evaluation": {"split": "test", "families": ("speaker_switch",), "base": True, "batch_size": 64},
}
