"""Settings under which SFT teaches a small model built from scratch
(``training.tiny_model.LEARNING_LM``) to plan DeliveryPlan cases on CPU: what the learning test
asserts (``tests/envs/deliveryplan/test_deliveryplan_llm_learning.py``). Keyword arguments of
``train_sft`` besides ``out`` and ``model``.

The demonstrations are the oracle's replies to both sides of the 60 training cases of the
source-key-disjoint split; the evaluation plays the trained model (the family's ``llm`` agent)
on the 24 held-out pairs. 8 epochs left every held-out reply malformed; 40 teach the grammar.
"""

from __future__ import annotations

DELIVERYPLAN_SFT = {
    "env_id": "hear_gym/DeliveryPlan-v0",
    "env_options": {"partition": "public"},
    "epochs": 20.0,
    "learning_rate": 3e-3,
    "batch_size": 16,
    "lora": {"enabled": False},  # all weights: LoRA on a random model cannot teach it a grammar
    "evaluation": {"split": "test", "base": False, "batch_size": 48},
}
