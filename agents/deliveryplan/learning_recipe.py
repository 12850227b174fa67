"""Settings under which SFT teaches a small model built from scratch
(``training.tiny_model.LEARNING_LM``) to plan DeliveryPlan cases on CPU: what the learning test
asserts (``tests/envs/deliveryplan/test_deliveryplan_llm_learning.py``). Keyword arguments of
``train_sft`` besides ``out`` and ``model``.

The demonstrations are the oracle's replies to the 134 training sides of the public split; the
evaluation plays the trained model (the family's ``llm`` agent) on its 16 test cases. 40 epochs
of batches of 8 (680 steps) teach the grammar and the plans (20 epochs leave the plans at
text-only's level); whether the change an edit licenses is learned depends on the model's
random draw, so no test asserts it (``docs/deliveryplan.md``). Batches of 16 (360 steps) sit at
the edge of the grammar: whether a third of the held-out replies break depends on that draw,
which the shared tokenizer's vocabulary changes whenever any family's text does.
"""

from __future__ import annotations

DELIVERYPLAN_SFT = {
    "env_id": "hear_gym/DeliveryPlan-v0",
    "env_options": {"partition": "public"},
    "epochs": 40.0,
    "learning_rate": 3e-3,
    "batch_size": 8,
    "lora": {"enabled": False},  # all weights: LoRA on a random model cannot teach it a grammar
    "evaluation": {"split": "test", "base": False, "batch_size": 48},
}
