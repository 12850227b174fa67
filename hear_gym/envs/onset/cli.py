"""Onset's part of ``hear-gym eval|listen --env hear_gym/Onset-v0`` (``plan_eval``, ``listen``).

``render`` is left out on purpose: a contrast group renders in about 25 ms in-process (eSpeak and
the branch construction), so there is no disk cache to fill; the prefix features the probes read
are cached by content in the shared feature store.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from hear_gym.cli.audio import ListenRequest
from hear_gym.cli.common import agent_factory, agent_spec, available_agents
from hear_gym.cli.evaluate import EvalRequest
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.envs.onset.family import ENV_ID, FAMILY
from hear_gym.envs.onset.groups.model import RENDERINGS, parse_episode_id

DEFAULT_CELLS = ("always_wait@A", "endpoint_plurality@A")


def _renderings(values: list[str]) -> tuple[str, ...]:
    unknown = sorted(set(values) - set(RENDERINGS))
    if unknown:
        raise typer.BadParameter(
            f"unknown renderings {unknown}; renderings: {RENDERINGS}", param_hint="--option rendering="
        )
    return tuple(values)


def plan_eval(request: EvalRequest) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request for Onset. Cells
    are ``agent@ACCESS`` (agents of ``hear_gym.agents.onset``; access A, A+T or T; default A).
    Own option: ``rendering`` (repeatable: clean, noise15; default both where the split has them)."""
    renderings = _renderings(request.take("rendering", list(RENDERINGS)))
    request.refuse_the_rest()
    registered = available_agents(FAMILY)
    cells, factories = [], {}
    for spec in request.cells or list(DEFAULT_CELLS):
        cell = _cell(spec)
        name, checkpoint = agent_spec(cell.agent)  # encoder_probe:FOLDER names its encoder
        if name not in registered:
            raise typer.BadParameter(
                f"unknown agent {name!r}; agents: {sorted(registered)}", param_hint="--cell"
            )
        factories[cell.agent] = agent_factory(registered[name], request.llm_client, checkpoint)
        cells.append(cell)
    episodes = tuple(e for e in request.episode_ids() if parse_episode_id(e)[2] in renderings)
    try:
        config = RunConfig(ENV_ID, tuple(cells), episodes, seed=request.seed)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return config, factories, {}


def _cell(spec: str) -> Cell:
    try:
        return Cell.from_spec(spec, default_access="A")
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--cell") from None


def listen(request: ListenRequest) -> str:
    """``hear-gym listen GROUP --env hear_gym/Onset-v0``: a contrast group's two branches under
    each of its renderings, as the full waveform and its five nested crops (16 kHz PCM_16 WAVs),
    with a JSON sidecar (group, construction manifest, targets and token-fraction text per crop).
    An episode id (``GROUP/BRANCH/RENDERING``) names its group."""
    import soundfile as sf

    from hear_gym.envs.onset.env import token_fraction_text
    from hear_gym.envs.onset.groups.generator import groups_by_id
    from hear_gym.envs.onset.groups.model import N_PREFIXES
    from hear_gym.envs.onset.scenes import rendered_group
    from hear_gym.speech.renderers import SAMPLE_RATE

    request.refuse_the_rest()
    group_id = request.episode_id or ""
    if "/" in group_id:
        try:
            group_id = parse_episode_id(group_id)[0]
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="EPISODE_ID") from None
    if group_id not in groups_by_id():
        raise typer.BadParameter(
            f"{f'no contrast group {group_id!r}' if group_id else 'give a contrast group id'} "
            "(e.g. book_uncertainty-03, alarm_urgency-00)",
            param_hint="EPISODE_ID",
        )
    rendered = rendered_group(group_id)
    group = rendered.group
    out = request.out / group_id
    out.mkdir(parents=True, exist_ok=True)
    crops = []
    for branch in group.branches:
        targets = group.targets(branch.branch_id)
        for rendering in group.renderings:
            for k in range(N_PREFIXES):
                name = f"{branch.branch_id}_{rendering}_prefix{k + 1}.wav"
                sf.write(
                    out / name, rendered.prefix(branch.branch_id, rendering, k), SAMPLE_RATE, subtype="PCM_16"
                )
                crops.append(
                    {
                        "file": name,
                        "branch": branch.branch_id,
                        "rendering": rendering,
                        "prefix": k,
                        "target": targets[k],
                        "text": token_fraction_text(group.transcript, k),
                    }
                )
    sidecar = {"group": group.as_record(), "manifest": rendered.manifest, "crops": crops}
    (out / "group.json").write_text(json.dumps(sidecar, indent=2), encoding="utf-8")
    actions = ", ".join(f"{b.branch_id}: {b.action} ({b.delivery.style})" for b in group.branches)
    return (
        f"wrote {len(crops)} crops of {group_id} to {out}\n"
        f"transcript: {group.transcript}\nonset: prefix {group.onset_index + 1} ({group.onset_fraction}); {actions}"
    )


sub_app = typer.Typer(help="Onset: when does partial speech license an action?", no_args_is_help=True)


@sub_app.command("counts")
def counts_command() -> None:
    """Table 1 of the contrast groups: families, groups, trajectories and prefix records per split."""
    from hear_gym.cli.common import console
    from hear_gym.envs.onset.groups.generator import select_groups
    from hear_gym.envs.onset.groups.model import N_PREFIXES, SPLITS

    rows = []
    for split in SPLITS:
        groups = select_groups(split)
        rows.append(
            {
                "split": split,
                "families": len({g.family for g in groups}),
                "groups": len(groups),
                "trajectories": 2 * len(groups),
                "prefix_records": sum(2 * len(g.renderings) * N_PREFIXES for g in groups),
            }
        )
    console.print_json(json.dumps(rows))


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="onset")
