"""Settings under which SFT and GRPO teach a small model built from scratch
(``training.tiny_model.LEARNING_LM``) VoiceGate on CPU in minutes: what the learning tests
assert (``tests/training/test_llm_learning.py``) and ``benchmarks/llm_post_training.py``
measures. Keyword arguments of ``train_sft`` and ``train_grpo`` besides ``out`` and ``model``.

SFT teaches the reply grammar from VoiceGate's gold actions, leaving out the switched commands:
their gold is a mute whose only cue is a second voice, which a text model cannot read, so they
teach it to mute some commands at random. GRPO then trains on side- and self-talk with the
commands' text-only inputs as ordinary rows (task ``voicegate_text_commands``: tool targets a
text model can read, which keep tool calls from eroding), 400 steps of 64 completions at lr
3e-4. It raises held-out side-talk reward, not the reward on every item (RESULTS.md,
post-training). The shorter recipe of 2026-12-02 (40 steps of 16 completions on side-talk,
from an SFT model with the switched commands) did not raise it on gen-3 items, nor did 80 steps
of 64 or the same 400 steps from that SFT model. Sampling at temperature 0.7 keeps tool calls
well-formed; at 1.0 sampled calls break, their malformed penalty teaches the model to drop tool
calls, and the held-out reward did not rise.
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
    "max_steps": 400,  # 80 steps of 64 left held-out side-talk where it was (RESULTS.md)
    "max_completion_length": 48,
    "learning_rate": 3e-4,
    "temperature": 0.7,
    "lora": FULL_WEIGHTS,
    # base: the SFT model on the same items, for the paired lift; every held-out item
    "evaluation": {"split": "test", "base": True, "batch_size": 64},
}
# Plain vs paired GRPO (benchmarks/llm_post_training.py) starts from this SFT model: the
# recipe's of 2026-12-02, switched commands included, with which its figures were measured.
VOICEGATE_PAIRING_SFT = {k: v for k, v in VOICEGATE_SFT.items() if k != "demo_options"}
# Plain vs paired GRPO (benchmarks/llm_post_training.py): the GRPO recipe on the speaker-switch
# pairs, paired groups or the same items as ordinary groups, same budget; both play the held-out
# speaker-switch inputs (a command, its switched twin, its text-only input).
# Frozen at the GRPO recipe of 2026-12-02 (its figures in RESULTS.md were measured with these).
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
