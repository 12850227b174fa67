"""``hear-gym train``: trainers found by entry point (the CLI never imports ``training``).

``train ppo`` trains a policy on any registered env's feature observation with sb3-contrib's
MaskablePPO or, with ``--backend rllib``, Ray RLlib's PPO (``training.ppo.train``); families add their
own trainers to ``train_app`` (Hear2Act: ``train probe``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from hear_gym.cli.common import (
    DEFAULT_ENV,
    EnvOption,
    ProgressOption,
    SeedOption,
    component,
    console,
    fail,
    family_options,
    option_value,
)
from hear_gym.core.registry import family
from hear_gym.core.run_folder import RunFolderBusy
from hear_gym.core.tables import print_tables
from hear_gym.eval.wandb_log import WandbStartError

# What --device takes, resolved by the trainer (agents.device), which refuses one this machine lacks.
DEVICE_FORMS = "auto (the first GPU when torch sees one, else the CPU), cpu, cuda or cuda:N"

train_app = typer.Typer(
    help="Train policies and the models agents and access conditions use (needs hear-gym[train]).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def env_options(pairs: list[str] | None) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs as ``gym.make`` kwargs (the last value of a repeated key)."""
    return {key: option_value(values[-1], key) for key, values in family_options(pairs).items()}


def _net_arch(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of layer sizes") from None
    if not sizes or min(sizes) < 1:
        raise typer.BadParameter("layer sizes must be >= 1", param_hint="--net-arch")
    return sizes


@train_app.command("ppo")
def train_ppo_command(
    out: Annotated[
        Path,
        typer.Option(
            help="Run folder (created; must not hold another training run; this run, interrupted, resumes)."
        ),
    ],
    env: EnvOption = DEFAULT_ENV,
    access: Annotated[
        str, typer.Option(help="Access condition whose feature observation the policy gets.")
    ] = "T",
    option: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE gym.make option, repeatable; values parse as JSON when they can "
            "(Hear2Act: feedback=prosody, reward=tiered, turn_cost=0.02, patience=3)."
        ),
    ] = None,
    train_option: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE gym.make option of the training envs only, never of the evaluations "
            "(Hear2Act: hidden_users=resample draws a consistent hidden user at every reset)."
        ),
    ] = None,
    steps: Annotated[int, typer.Option(min=1, help="Environment steps to train for.")] = 20_000,
    n_envs: Annotated[int, typer.Option(min=1, help="Vectorized envs (rllib: per env runner).")] = 4,
    vec_env: Annotated[
        str, typer.Option(help="dummy (one process) or subproc (one process per env).")
    ] = "dummy",
    backend: Annotated[
        str,
        typer.Option(
            help="sb3 (Stable-Baselines3, one machine) or rllib (Ray RLlib, needs hear-gym[rllib]: "
            "a local Ray instance, or the cluster RAY_ADDRESS names)."
        ),
    ] = "sb3",
    env_runners: Annotated[
        int,
        typer.Option(
            min=0,
            help="rllib: Ray processes that sample, each with --n-envs envs, on any node of the "
            "cluster (0: sample in this process).",
        ),
    ] = 0,
    n_steps: Annotated[
        int,
        typer.Option(
            min=1,
            help="Steps per env and rollout (rllib: each iteration samples n_steps x n_envs in all).",
        ),
    ] = 128,
    batch_size: Annotated[int, typer.Option(min=1, help="Minibatch size.")] = 128,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over each rollout.")] = 4,
    learning_rate: Annotated[float, typer.Option(help="Adam learning rate.")] = 3e-4,
    gamma: Annotated[float, typer.Option(help="Discount.")] = 0.99,
    ent_coef: Annotated[float, typer.Option(help="Entropy bonus.")] = 0.01,
    net_arch: Annotated[str, typer.Option(help="Hidden layer sizes, comma-separated.")] = "64,64",
    policy: Annotated[
        str,
        typer.Option(
            help="Policy network: mlp (MultiInputPolicy), per_option (Hear2Act: one shared "
            "network scores every option's row for its recommend action; sb3 only) or "
            "per_option_listening (per_option with a listening head on the confirm logit; A or A+T)."
        ),
    ] = "mlp",
    normalize_observation: Annotated[
        bool,
        typer.Option(
            help="Standardize the measured leaves (prosody, VoiceGate's change vector): sb3 by "
            "their running mean and variance (VecNormalize), rllib by a mean and variance "
            "measured over 2,048 random-action steps before training."
        ),
    ] = True,
    init_from: Annotated[
        Path | None,
        typer.Option(
            help="Start from this PPO checkpoint's weights (sb3; same env, access, policy and "
            "net arch), e.g. to fine-tune under another reward; its standardization stays fixed."
        ),
    ] = None,
    imitate: Annotated[
        str | None,
        typer.Option(
            help="Before PPO, behaviour-clone this agent registered for the env (sb3; Hear2Act: "
            "planner, ask_before_confirm) from its play on the training envs; the cloned policy is "
            "evaluated as checkpoints/step_0."
        ),
    ] = None,
    imitate_episodes: Annotated[
        int,
        typer.Option(min=1, help="Training episodes the --imitate agent plays (each DAgger round as many)."),
    ] = 300,
    imitate_epochs: Annotated[
        int, typer.Option(min=1, help="Passes over the demonstrations per cloning.")
    ] = 20,
    dagger_rounds: Annotated[
        int,
        typer.Option(
            min=0,
            help="DAgger rounds after the first cloning: episodes played half by the policy, labelled by the agent.",
        ),
    ] = 0,
    device: Annotated[
        str,
        typer.Option(
            help=f"Where the policy trains (sb3): {DEVICE_FORMS}. The CPU by default: small MLP "
            "policies train faster there."
        ),
    ] = "cpu",
    seed: SeedOption = 0,
    eval_every: Annotated[
        int, typer.Option(min=0, help="Evaluate a checkpoint every N steps (0: at the end only).")
    ] = 10_000,
    eval_split: Annotated[str, typer.Option(help="Held-out split the evaluations play.")] = "test",
    eval_limit: Annotated[int | None, typer.Option(min=1, help="Only the first N held-out episodes.")] = None,
    keep_best: Annotated[
        bool,
        typer.Option(
            help="At the end, copy the evaluated checkpoint with the best held-out return to "
            "checkpoints/best (choose on --eval-split dev, so the test report stays untouched)."
        ),
    ] = False,
    wandb_project: Annotated[
        str | None, typer.Option(help="W&B project (offline unless WANDB_API_KEY is set).")
    ] = "hear-gym",
    wandb: Annotated[bool, typer.Option(help="Log curves to W&B.")] = True,
    progress: ProgressOption = True,
    discard_resume: Annotated[
        bool,
        typer.Option(
            help="Discard the run's resume points (resume/) and start this run over in --out: "
            "for a resume point reported damaged."
        ),
    ] = False,
) -> None:
    """Train a PPO policy (MaskablePPO, MultiInputPolicy; or RLlib's PPO with the same network)
    on an env's feature observation.

    Writes settings.json, curve.jsonl (training episodes per rollout, held-out evaluations with
    CIs), checkpoints/<step>/ and checkpoints/final/ (safetensors + JSON; play one with
    `hear-gym eval --cell ppo:FOLDER@ACCESS`), resume/step_N/ (what the same command resumes
    from after an interruption; --discard-resume starts over instead) and, with W&B, wandb/."""
    train = component("train_ppo")
    try:
        result = train(
            out=out,
            env_id=env,
            access=access,
            env_options=env_options(option),
            train_env_options=env_options(train_option),
            total_steps=steps,
            n_envs=n_envs,
            vec_env=vec_env,
            n_steps=n_steps,
            batch_size=batch_size,
            n_epochs=epochs,
            learning_rate=learning_rate,
            gamma=gamma,
            ent_coef=ent_coef,
            net_arch=_net_arch(net_arch),
            policy=policy,
            normalize_observation=normalize_observation,
            init_from=None if init_from is None else str(init_from),
            imitate=imitate,
            imitate_episodes=imitate_episodes,
            imitate_epochs=imitate_epochs,
            dagger_rounds=dagger_rounds,
            seed=seed,
            eval_every=eval_every,
            eval_split=eval_split,
            eval_limit=eval_limit,
            keep_best=keep_best,
            wandb_project=wandb_project if wandb else None,
            progress=progress,
            backend=backend,
            env_runners=env_runners,
            device=device,
            discard_resume=discard_resume,
        )
    except (ValueError, FileExistsError, TypeError, RunFolderBusy, WandbStartError) as exc:
        fail(str(exc))
    if result["reused"]:
        console.print(f"{out} already holds this finished run: its final evaluation, not retrained")
    evaluation = Path(result["evaluation"])
    metadata = json.loads((evaluation / "metadata.json").read_text(encoding="utf-8"))
    console.print(f"[bold]held-out evaluation of the final checkpoint[/bold] ({evaluation})")
    print_tables(family(env).tables(metadata), console)
    console.print(f"checkpoint: {result['checkpoint']}  curve: {out / 'curve.jsonl'}")
    if keep_best:
        console.print(f"best checkpoint on {eval_split} (held-out return): {out / 'checkpoints' / 'best'}")
