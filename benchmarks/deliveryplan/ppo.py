"""PPO on DeliveryPlan's feature observation under three rewards: does a trained policy respond
to the edit on held-out cases, or only learn the emotion?

Run: ``python -m benchmarks.deliveryplan.ppo [--partition public] [--out benchmarks/out/deliveryplan_ppo]``
(about 8 minutes on 2 shared cores). Each run trains MaskablePPO through ``training/`` (shared
``mlp`` policy, T features, discrete catalogue) on the partition's training episodes (its
training pairs: no held-out key on either side) and is played greedily on its test cases;
prior-only is the control. Prints one table (metric means, counterfactual consistency with a
case-bootstrap CI).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401  (registers the envs)
from agents.deliveryplan.play import mean_rows, play_checkpoint, play_control
from hear_gym.envs.deliveryplan.splits import PARTITIONS, split_ids
from hear_gym.stats.bootstrap import bootstrap
from training.ppo.train import PPOSettings, train

SHOWN = ("counterfactual_consistency", "required_change_accuracy", "plan_slot_accuracy_original", "gcite")
COMMON = dict(
    env_id="hear_gym/DeliveryPlan-v0",
    access="T",
    n_envs=4,
    n_steps=64,
    batch_size=128,
    eval_every=0,
    wandb_project=None,
    progress=False,
    seed=0,
)
RUNS = {  # the first is the learning test's run (tests/envs/deliveryplan/test_deliveryplan_learning.py)
    "counterfactual_consistency": dict(total_steps=40_000, learning_rate=1e-3, ent_coef=0.01),
    "gcite": dict(total_steps=60_000, learning_rate=2e-3, ent_coef=0.0),
    "plan_slot_accuracy": dict(total_steps=30_000, learning_rate=2e-3, ent_coef=0.0),
}


def summary(rows: list[dict]) -> dict:
    consistency = np.array([r["counterfactual_consistency"] for r in rows])
    ci = bootstrap(lambda idx: consistency[idx].mean(axis=-1), len(consistency)).as_dict()
    return {**mean_rows(rows, SHOWN), "consistency_ci": ci, "pairs_with_credit": int((consistency > 0).sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/deliveryplan_ppo"))
    parser.add_argument("--partition", default="public", choices=PARTITIONS)
    args = parser.parse_args()
    partition = args.partition
    test = split_ids("test", partition)
    results = {"prior_only": summary(play_control("prior_only", test, partition))}
    for reward, settings in RUNS.items():
        run = PPOSettings(
            out=args.out / reward,
            env_options={"partition": partition, "reward": reward},
            eval_split="test" if partition == "public" else f"{partition}/test",
            **COMMON,
            **settings,
        )
        results[f"ppo ({reward})"] = {
            **summary(play_checkpoint(train(run)["checkpoint"], test)),
            **settings,
        }
    table = Table(
        "policy",
        *SHOWN,
        "CF 95% CI",
        "pairs with CF > 0",
        title=f"{len(test)} held-out cases ({partition} test)",
    )
    for name, row in results.items():
        ci = row["consistency_ci"]
        table.add_row(
            name,
            *(f"{row[m]:.3f}" for m in SHOWN),
            f"[{ci['low']:.3f}, {ci['high']:.3f}]",
            str(row["pairs_with_credit"]),
        )
    Console(width=200).print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
