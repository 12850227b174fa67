"""DeliveryPlan's part of ``hear-gym eval --env hear_gym/DeliveryPlan-v0`` (``plan_eval``).

``listen`` and ``render`` are left out: an evidence clip renders in milliseconds in-process and is
cached by content (``evidence_audio``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from hear_gym.cli.common import registered_cells
from hear_gym.cli.evaluate import EvalRequest
from hear_gym.core.run_config import RunConfig
from hear_gym.core.run_folder import write_text_atomic
from hear_gym.envs.deliveryplan.env import REWARD_OPTIONS
from hear_gym.envs.deliveryplan.family import ENV_ID, FAMILY

DEFAULT_CELLS = ("text_only@T", "oracle@T", "prior_only@T")


def plan_eval(request: EvalRequest) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request for DeliveryPlan.
    Cells are ``agent@ACCESS`` (agents of ``hear_gym.agents.deliveryplan``; access T, A+T or A;
    default T). A split may name its partition (``--split source_key_disjoint/test``): the envs
    are then built with that partition, so fitted controls learn from its training split. Own
    option: ``reward`` (one of the env's reward options; default gcite)."""
    reward = request.take("reward", ["gcite"])[-1]
    if reward not in REWARD_OPTIONS:
        raise typer.BadParameter(f"reward must be one of {REWARD_OPTIONS}", param_hint="--option reward=")
    request.refuse_the_rest()
    cells, factories = registered_cells(FAMILY, request.cells or DEFAULT_CELLS, "T", request.llm_client)
    partition = request.split.partition("/")[0] if "/" in request.split else "public"
    try:
        config = RunConfig(
            ENV_ID,
            tuple(cells),
            request.item_ids(),
            seed=request.seed,
            env_kwargs=(("partition", partition), ("reward", reward)),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return config, factories, {}


sub_app = typer.Typer(
    help="DeliveryPlan: plan delivery from cited evidence (VoxReason).", no_args_is_help=True
)


@sub_app.command("export")
def export_command(out: Path = typer.Option(..., help="JSONL file: one case per line.")) -> None:
    """Write the 100 cases (records, expected plans, edit, declared delta) as JSONL."""
    from hear_gym.envs.deliveryplan.cases import generate_cases

    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, "".join(json.dumps(case.as_dict()) + "\n" for case in generate_cases()))
    typer.echo(f"wrote {len(generate_cases())} cases to {out}")


@sub_app.command("splits")
def splits_command() -> None:
    """Cases per split of each partition (public, source-key-disjoint, source-emotion-disjoint)."""
    from hear_gym.cli.common import console
    from hear_gym.envs.deliveryplan.splits import PARTITIONS, partition

    console.print_json(json.dumps({p: {s: len(ids) for s, ids in partition(p).items()} for p in PARTITIONS}))


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="deliveryplan")
