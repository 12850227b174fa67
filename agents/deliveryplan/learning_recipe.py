"""Settings under which SFT teaches a small model built from scratch
(``training.tiny_model.LEARNING_LM``) to plan DeliveryPlan cases on CPU: what the learning test
asserts (``tests/envs/deliveryplan/test_deliveryplan_llm_learning.py``). Keyword arguments of
``train_sft`` besides ``out`` and ``model``.

The demonstrations are the oracle's replies to the 134 training sides of the public split; the
evaluation plays the trained model (the family's ``llm`` agent) on its 16 test cases. 40 epochs
teach the grammar and the plans (20 leave the plans at text-only's level); the change an edit
licenses is not learned at 40 or 80 epochs (``docs/deliveryplan.md``).
"""

from __future__ import annotations

DELIVERYPLAN_SFT = {
    "env_id": "hear_gym/DeliveryPlan-v0",
    "env_options": {"partition": "public"},
    "epochs": 40.0,
    "learning_rate": 3e-3,
    "batch_size": 16,
    "lora": {"enabled": False},  # all weights: LoRA on a random model cannot teach it a grammar
    "evaluation": {"split": "test", "base": False, "batch_size": 48},
}
