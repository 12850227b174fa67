"""The learning tier (``pytest -m learning``): a policy trained here changes its plan the way an
edited cue licenses on held-out cases, which the prior-only control does not.

MaskablePPO (the shared ``training/`` trainer, shared ``mlp`` policy) trains on the feature
observation under T and the discrete catalogue, on the 67 training cases of the public split,
rewarded by counterfactual consistency (0 at step 0, the pair's consistency at step 1). It is
then played greedily on the 16 held-out cases (other cases of the same keys: the public split
shares keys between its splits by design). The trained policy's consistency must have a
case-bootstrap CI above zero, and exceed both prior-only's (measured on the same cases) and the
same run's untrained policy (learning rate 0).

Not the source-key-disjoint split: each emotion strengthens along its own plan slot, so a key
training never shows (not even as an edit, ``splits.training_pairs``) has a plan training cannot
teach; there a trained policy is expected to stay near prior-only.

This is the PPO-on-features check; ``test_deliveryplan_llm_learning.py`` checks a tiny language
model trained on the family's SFT demonstrations.
About 3 minutes on the busy 2-core machine (40k of the benchmark's 130k steps, which took 595 s).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import hear_gym  # noqa: E402,F401
from agents.deliveryplan.play import mean_rows, play_checkpoint, play_control  # noqa: E402
from hear_gym.envs.deliveryplan.splits import split_ids  # noqa: E402
from hear_gym.stats.bootstrap import bootstrap  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

pytestmark = pytest.mark.learning

PARTITION = "public"
RUN = dict(
    env_id="hear_gym/DeliveryPlan-v0",
    access="T",
    env_options={"partition": PARTITION, "reward": "counterfactual_consistency"},
    n_envs=4,
    n_steps=64,
    batch_size=128,
    learning_rate=1e-3,
    ent_coef=0.01,
    eval_every=0,
    eval_split="test",
    wandb_project=None,
    progress=False,
    seed=0,
)


def held_out_consistency(checkpoint) -> np.ndarray:
    rows = play_checkpoint(checkpoint, split_ids("test", PARTITION))
    return np.array([r["counterfactual_consistency"] for r in rows])


def test_ppo_beats_prior_only_on_counterfactual_consistency_on_held_out_keys(tmp_path):
    trained = held_out_consistency(
        train(PPOSettings(out=tmp_path / "trained", total_steps=40_000, **RUN))["checkpoint"]
    )
    untrained = held_out_consistency(
        train(PPOSettings(out=tmp_path / "untrained", total_steps=256, **{**RUN, "learning_rate": 0.0}))[
            "checkpoint"
        ]
    )
    prior = mean_rows(
        play_control("prior_only", split_ids("test", PARTITION), PARTITION), ["counterfactual_consistency"]
    )
    estimate = bootstrap(lambda idx: trained[idx].mean(axis=-1), len(trained))
    assert estimate.low > 0, f"held-out CF {estimate.point:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"
    assert trained.mean() > prior["counterfactual_consistency"]
    assert trained.mean() > untrained.mean()
