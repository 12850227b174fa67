"""Can the ``per_option`` PPO policy represent the rules it is shown beside? Behaviour-clone each
expert (``ask_before_confirm@T``, ``planner@T``) into the policy class ``make run`` trains, from
its T inputs, and play the clone beside its expert on the dev and test scenarios (prosody
feedback, success reward, turn cost 0.05: ``make run``'s setting).

The demonstrations are the expert's own episodes on the training split with twin users
(``hidden_users=resample``), as PPO trains; ``--dagger K`` adds K rounds of DAgger (episodes
played half by the clone, labelled by the expert). The clone plays as ``ppo:`` cells do
(sampled) and greedily (``ppo_greedy``), paired with the expert by scenario. Prints a table and
writes benchmarks/out/hear2act_ppo_imitation/<expert>.json.

    python -m benchmarks.hear2act.ppo_imitation [--experts ask_before_confirm planner]
        [--episodes 600] [--epochs 30] [--dagger 0] [--seed 1]
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

from sb3_contrib import MaskablePPO

from agents.ppo import GreedyPPOAgent, PPOAgent, ppo_policies
from hear_gym.cli.common import available_agents
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.pipeline import evaluate
from hear_gym.stats.bootstrap import flat_estimates
from training.ppo.envs import make_vec_env
from training.ppo.imitation import imitate
from training.ppo.settings import PPOSettings
from training.ppo.train import one_compute_thread, save_checkpoint

ENV_ID = "hear_gym/Hear2Act-v0"
ENV_OPTIONS = {"feedback": "prosody", "reward": "success", "turn_cost": 0.05}
OUT = Path("benchmarks/out/hear2act_ppo_imitation")


def clone_expert(expert: str, args) -> tuple[Path, list[dict]]:
    settings = PPOSettings(
        out=OUT / expert,
        env_id=ENV_ID,
        env_options=ENV_OPTIONS,
        train_env_options={"hidden_users": "resample"},
        policy="per_option",
        n_envs=1,
        batch_size=256,
        seed=args.seed,
        imitate=expert,
        imitate_episodes=args.episodes,
        imitate_epochs=args.epochs,
        dagger_rounds=args.dagger,
        wandb_project=None,
        progress=False,
    )
    envs = make_vec_env(settings)
    model = MaskablePPO(ppo_policies(ENV_ID)["per_option"].load(), envs, seed=args.seed, verbose=0)
    report = imitate(model.policy, settings)
    checkpoint = save_checkpoint(model, settings, OUT / expert / "checkpoint", 0)
    envs.close()
    return checkpoint, report


def play(expert: str, checkpoint: Path, split: str) -> dict[str, dict]:
    """The clone (sampled and greedy) and its expert on ``split``, one run, paired by scenario."""
    env_kwargs = tuple(sorted((k, v) for k, v in ENV_OPTIONS.items() if k != "feedback"))
    cells = tuple(Cell(name, "T", (("feedback", "prosody"),)) for name in ("ppo", "ppo_greedy", expert))
    config = RunConfig(ENV_ID, cells, family(ENV_ID).item_ids(split), seed=1, env_kwargs=env_kwargs)
    agents = {
        "ppo": functools.partial(PPOAgent.from_checkpoint, checkpoint),
        "ppo_greedy": functools.partial(GreedyPPOAgent.from_checkpoint, checkpoint),
        expert: available_agents(family(ENV_ID))[expert].load(),
    }
    metadata = evaluate(OUT / expert / f"eval-{split}", config, agents, progress=False)
    return {cell.name: flat_estimates(metadata["cells"][cell.name]["metrics"]) for cell in cells}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experts", nargs="+", default=["ask_before_confirm", "planner"])
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--dagger", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    print("| expert | split | cell | return | 1st% | premature closure% | dialogue length |")
    print("|---|---|---|---|---|---|---|")
    with one_compute_thread():
        for expert in args.experts:
            checkpoint, report = clone_expert(expert, args)
            result = {"report": report, "args": vars(args)}
            for split in ("dev", "test"):
                result[split] = metrics = play(expert, checkpoint, split)
                for cell, m in metrics.items():
                    cols = [
                        f"{m[k]['point']:.3f} [{m[k]['low']:.3f}, {m[k]['high']:.3f}]"
                        for k in ("return", "1st%", "premature closure%")
                    ]
                    print(
                        f"| {expert} | {split} | {cell} | {' | '.join(cols)} | {m['dialogue length']['point']:.2f} |"
                    )
            (OUT / f"{expert}.json").write_text(json.dumps(result, indent=1))
            print(f"{expert}: {report}")


if __name__ == "__main__":
    main()
