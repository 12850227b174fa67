"""Does an asymmetric critic help a PPO policy that hears the user beat the best transcript policy?

The target: under prosody-mediated feedback at turn cost 0.1, an A+T PPO policy should
beat ``planner@T`` (the strongest transcript reference) on return with a paired CI above zero.
The idea tried here is an asymmetric actor-critic: ``per_option_privileged``
(``agents.hear2act.option_policy``) is ``per_option`` whose value network also reads the hidden
concern state of the user's latest turn in training, so the advantages that teach the actor to
confirm after a genuine assent (and not after a reluctant one, same words) are measured against
a baseline that knows which it was. The actor never reads that state.

Two runs on the same seed, ``benchmarks/hear2act/ppo_curves.py``'s hyperparameters (``HYPER``), twin
users, one torch thread each, run side by side: A+T ``per_option`` (the control) and A+T
``per_option_privileged``. Both train at turn cost ``TRAIN_COST`` (0.05: from scratch at a higher
cost PPO falls into closing on the first assent, see benchmarks/hear2act/ppo_curves.md; the policy
does not observe the turn cost) and keep their best dev checkpoint; both then play the 96 test
scenarios x ``EVAL_ROLLOUTS`` at turn cost ``EVAL_COST`` (0.1), sampled and greedy, beside
``planner@T``, ``planner@T+S`` and ``ask_until_disclosed@T``, on the same episodes: the contrasts
are paired by scenario (2,000 scenario-bootstrap resamples).

    python -m benchmarks.hear2act.ppo_privileged_critic [--steps N] [--seed S] [--eval-every E]
                                               [--rollouts R] [--scenarios N] [--until STEP]

``--until STEP`` trains nothing: it plays runs of the same ``--steps``/``--seed``/``--eval-every``
stopped before their budget (on a deadline), each cut at ``STEP`` (its dev-best evaluation up to
there), so both policies are compared after the same number of steps.

Writes benchmarks/out/ppo_privileged_critic/ (the runs, the evaluation, ``summary.json``).
"""

from __future__ import annotations

import argparse
import functools
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.hear2act.ppo_curves import (
    EVAL_ROLLOUTS,
    GREEDY_TAG,
    HEAR2ACT,
    HYPER,
    PLAYERS,
    TWINS,
    held_out_episodes,
)
from hear_gym.cli.common import available_agents
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import contrast_ci, ratio_ci
from training.ppo.train import PPOSettings, train

OUT = Path(__file__).resolve().parents[1] / "out" / "ppo_privileged_critic"
TRAIN_COST, EVAL_COST = 0.05, 0.10
POLICIES = ("per_option", "per_option_privileged")
REFERENCES = (("planner", "T"), ("planner", "T+S"), ("ask_until_disclosed", "T"))
STRONGEST_TRANSCRIPT = "planner@T"
# what the summary keeps of each training rollout (the mean over the episodes that ended in it)
TRAIN_COLUMNS = ("step", "return", "1st%", "premature closure%", "dialogue length")


def run_settings(policy: str, steps: int, seed: int, eval_every: int) -> dict:
    """One run's ``PPOSettings`` arguments (less ``out``)."""
    return dict(
        env_id=HEAR2ACT,
        access="A+T",
        env_options={
            "feedback": "prosody",
            "turn_cost": TRAIN_COST,
            "audio_cache_dir": str(OUT / "render_cache"),
        },
        train_env_options=TWINS,
        policy=policy,
        seed=seed,
        total_steps=steps,
        eval_every=eval_every,
        eval_split="dev",
        eval_limit=48,
        keep_best=True,
        wandb_project=None,
        progress=False,
        **HYPER,
    )


def run_folder(policy: str, steps: int, seed: int) -> Path:
    return OUT / f"ppo-A+T-{policy}-s{seed}-{steps}"


def train_one(policy: str, steps: int, seed: int, eval_every: int) -> dict:
    train(PPOSettings(out=run_folder(policy, steps, seed), **run_settings(policy, steps, seed, eval_every)))
    return run_record(policy, steps, seed, eval_every)


def run_record(policy: str, steps: int, seed: int, eval_every: int, until: int | None = None) -> dict:
    """A run's settings, curve and checkpoint to play: its kept best (``checkpoints/best``), or
    with ``until`` the dev-best of its evaluations up to that step (the later one on a tie), for a
    run stopped before its budget: both policies are then cut at the same step."""
    out = run_folder(policy, steps, seed)
    curve = [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]
    checkpoint = out / "checkpoints" / "best"
    if until is not None:
        curve = [row for row in curve if row["step"] <= until]
        evaluated = [row for row in curve if row["kind"] == "eval"]
        best = max(evaluated, key=lambda row: (row["metrics"]["return"]["point"], row["step"]))
        checkpoint = out / best["checkpoint"]
    return {
        "name": f"{policy}-s{seed}",
        "settings": run_settings(policy, steps, seed, eval_every),
        "checkpoint": str(checkpoint),
        "curve": curve,
    }


def evaluate_at_cost(
    trained: list[dict], eval_dir: Path, scenarios: int | None = None, rollouts: int = EVAL_ROLLOUTS
) -> list[dict]:
    """The runs' best checkpoints (sampled and greedy) and the references on the same test episodes
    at ``EVAL_COST``; the episode records."""
    played = [
        {
            **run,
            "settings": {**run["settings"], "env_options": {"feedback": "prosody", "turn_cost": EVAL_COST}},
        }
        for run in trained
    ]
    cell_options, episodes, env_kwargs = held_out_episodes(played)
    episodes = episodes[:scenarios]
    registered = available_agents(family(HEAR2ACT))
    cells, agents = [], {}
    for agent, access in REFERENCES:
        cells.append(Cell(agent, access, cell_options))
        agents[agent] = registered[agent].load()
    for run in trained:
        for tag, player in PLAYERS.items():
            cells.append(Cell(run["name"] + tag, "A+T", cell_options))
            agents[run["name"] + tag] = functools.partial(player.from_checkpoint, run["checkpoint"])
    env_kwargs = (*env_kwargs, ("audio_cache_dir", str(OUT / "render_cache")))
    config = RunConfig(HEAR2ACT, tuple(cells), episodes, rollouts, seed=0, env_kwargs=env_kwargs)
    evaluate(eval_dir, config, agents, progress=False)
    return read_results(eval_dir / "results.jsonl")


def summarize(records: list[dict], trained: list[dict]) -> dict:
    """Each cell's return, and each policy minus planner@T and minus the control (paired)."""
    scenarios = sorted({r["item_id"] for r in records})
    by_cell: dict[str, list] = {}
    for record in records:
        by_cell.setdefault(f"{record['agent']}@{record['access']}", []).append(record)
    sums = {
        cell: scenario_sums(episodes, scenarios, METRICS_BY_NAME["return"])
        for cell, episodes in by_cell.items()
    }
    out = {"return": {cell: ratio_ci(s).as_dict() for cell, s in sums.items()}, "contrasts": {}}
    control, privileged = (run["name"] for run in trained)
    for tag in PLAYERS:
        cells = {name: f"{name}{tag}@A+T" for name in (control, privileged)}
        for cell in cells.values():
            out["contrasts"][f"{cell} - {STRONGEST_TRANSCRIPT}"] = contrast_ci(
                [(1.0, sums[cell]), (-1.0, sums[STRONGEST_TRANSCRIPT])]
            ).as_dict()
        out["contrasts"][f"{cells[privileged]} - {cells[control]}"] = contrast_ci(
            [(1.0, sums[cells[privileged]]), (-1.0, sums[cells[control]])]
        ).as_dict()
    return out


def _ci(estimate: dict) -> str:
    return f"{estimate['point']:+.3f} [{estimate['low']:+.3f}, {estimate['high']:+.3f}]"


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)  # the seed `make run` trains (it learns to ask)
    parser.add_argument("--scenarios", type=int, default=None, help="First N test scenarios (a smoke run).")
    parser.add_argument("--rollouts", type=int, default=EVAL_ROLLOUTS, help="Rollouts per test scenario.")
    parser.add_argument("--eval-every", type=int, default=None, help="Dev evaluations (default: steps / 3).")
    parser.add_argument(
        "--until",
        type=int,
        default=None,
        help="Train nothing: play the runs of these settings (stopped early) cut at this step.",
    )
    args = parser.parse_args()
    eval_every = args.eval_every or max(args.steps // 3, 1)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.until is None:
        with ProcessPoolExecutor(len(POLICIES)) as pool:
            trained = list(pool.map(train_one, POLICIES, [args.steps] * 2, [args.seed] * 2, [eval_every] * 2))
    else:
        trained = [run_record(policy, args.steps, args.seed, eval_every, args.until) for policy in POLICIES]
    cut = f"-until{args.until}" if args.until is not None else ""
    eval_dir = (
        OUT
        / f"paired_eval-cost{EVAL_COST}-{args.steps}{cut}-s{args.seed}-n{args.scenarios or 'all'}x{args.rollouts}"
    )
    records = evaluate_at_cost(trained, eval_dir, args.scenarios, args.rollouts)
    summary = {
        "steps": args.steps,
        "until": args.until,
        "seed": args.seed,
        "rollouts": args.rollouts,
        **summarize(records, trained),
    }
    summary["dev_curves"] = {
        run["name"]: [
            (r["step"], r["metrics"]["return"]["point"]) for r in run["curve"] if r["kind"] == "eval"
        ]
        for run in trained
    }
    summary["train_curves"] = {
        run["name"]: [
            {k: r[k] for k in TRAIN_COLUMNS if k in r} for r in run["curve"] if r["kind"] == "train"
        ]
        for run in trained
    }
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    console = Console()
    n = len({r["item_id"] for r in records})
    table = Table(title=f"return at turn cost {EVAL_COST} ({n} test scenarios x {args.rollouts})")
    for column in ("cell", "return [95% CI]"):
        table.add_column(column)
    for cell, estimate in summary["return"].items():
        table.add_row(cell, _ci(estimate).lstrip("+"))
    console.print(table)
    contrasts = Table(title="paired contrasts (return)")
    for column in ("contrast", "difference [95% CI]"):
        contrasts.add_column(column)
    for name, estimate in summary["contrasts"].items():
        contrasts.add_row(name, _ci(estimate))
    console.print(contrasts)
    console.print(f"dev returns of the evaluations: {summary['dev_curves']} (greedy tag: {GREEDY_TAG})")
    return summary


if __name__ == "__main__":
    main()
