"""Onset's part of ``hear-gym eval|listen|render --env hear_gym/Onset-v0`` (``plan_eval``,
``listen``, ``render``). Each honours ``--renderer`` (the speech of the contrast groups; any
registered renderer) and ``eval`` ``--audio-cache-dir``.

A contrast group builds in about 25 ms in-process with eSpeak, so ``render`` pays only for the
slower renderers: it stores a split's source renderings in the disk cache that ``eval
--audio-cache-dir`` (the env's ``audio_cache_dir``) reads. The prefix features the probes read are
cached by content in the shared feature store.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from hear_gym.cli.audio import ListenRequest, RenderRequest
from hear_gym.cli.common import agent_factory, agent_spec, available_agents
from hear_gym.cli.evaluate import EvalRequest
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.run_folder import write_text_atomic, write_wav_atomic
from hear_gym.envs.onset.family import ENV_ID, FAMILY
from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.groups.model import RENDERINGS, parse_item_id

DEFAULT_CELLS = ("always_wait@A", "endpoint_plurality@A")


def _renderings(values: list[str]) -> tuple[str, ...]:
    unknown = sorted(set(values) - set(RENDERINGS))
    if unknown:
        raise typer.BadParameter(
            f"unknown renderings {unknown}; renderings: {RENDERINGS}", param_hint="--option rendering="
        )
    return tuple(values)


def _checked_renderer(name: str) -> str:
    """The renderer name, or a one-line error naming the registered ones (or the missing extra)."""
    from hear_gym.envs.onset.scenes import source_cache

    try:
        source_cache(name)
    except (ValueError, ImportError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--renderer") from None
    return name


def plan_eval(request: EvalRequest) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request for Onset. Cells
    are ``agent@ACCESS`` (agents of ``hear_gym.agents.onset``; access A, A+T or T; default A).
    Own option: ``rendering`` (repeatable: clean, noise15; default both where the split has them).
    The env speaks with ``--renderer`` and reads ``--audio-cache-dir`` if given."""
    renderings = _renderings(request.take("rendering", list(RENDERINGS)))
    request.refuse_the_rest()
    env_kwargs: tuple[tuple[str, Any], ...] = (("renderer", _checked_renderer(request.renderer)),)
    if request.audio_cache_dir is not None:
        env_kwargs += (("audio_cache_dir", str(request.audio_cache_dir)),)
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
    episodes = tuple(e for e in request.item_ids() if parse_item_id(e)[2] in renderings)
    try:
        config = RunConfig(ENV_ID, tuple(cells), episodes, seed=request.seed, env_kwargs=env_kwargs)
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
    each of its renderings, as its five nested crops (16 kHz PCM_16 WAVs; the fifth is the whole
    trajectory), spoken by ``--renderer``, with a JSON sidecar (group, construction manifest with
    the renderer, targets and token-fraction text per crop). An episode id
    (``GROUP/BRANCH/RENDERING``) names its group."""
    from hear_gym.envs.onset.env import token_fraction_text
    from hear_gym.envs.onset.groups.model import N_PREFIXES
    from hear_gym.envs.onset.scenes import rendered_group
    from hear_gym.speech.renderers import SAMPLE_RATE

    request.refuse_the_rest()
    renderer = _checked_renderer(request.renderer)
    group_id = request.item_id or ""
    if "/" in group_id:
        try:
            group_id = parse_item_id(group_id)[0]
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="ITEM_ID") from None
    if group_id not in groups_by_id():
        raise typer.BadParameter(
            f"{f'no contrast group {group_id!r}' if group_id else 'give a contrast group id'} "
            "(e.g. book_uncertainty-03, alarm_urgency-00)",
            param_hint="ITEM_ID",
        )
    rendered = rendered_group(group_id, renderer)
    group = rendered.group
    out = request.out / group_id
    out.mkdir(parents=True, exist_ok=True)
    crops = []
    for branch in group.branches:
        targets = group.targets(branch.branch_id)
        for rendering in group.renderings:
            for k in range(N_PREFIXES):
                name = f"{branch.branch_id}_{rendering}_prefix{k + 1}.wav"
                write_wav_atomic(out / name, rendered.prefix(branch.branch_id, rendering, k), SAMPLE_RATE)
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
    write_text_atomic(out / "group.json", json.dumps(sidecar, indent=2))
    actions = ", ".join(f"{b.branch_id}: {b.action} ({b.delivery.style})" for b in group.branches)
    return (
        f"wrote {len(crops)} crops of {group_id} ({renderer}) to {out}\n"
        f"transcript: {group.transcript}\nonset: prefix {group.onset_index + 1} ({group.onset_fraction}); {actions}"
    )


def render(request: RenderRequest) -> str:
    """``hear-gym render --env hear_gym/Onset-v0``: the source renderings of every contrast group
    of the split, spoken by ``--renderer``, into the disk cache that ``eval --audio-cache-dir``
    reads."""
    from rich.progress import Progress

    from hear_gym.envs.onset.scenes import build_group, source_cache

    request.refuse_the_rest()
    renderer = _checked_renderer(request.renderer)
    group_ids = sorted({parse_item_id(e)[0] for e in request.item_ids()})
    groups = groups_by_id()
    cache = source_cache(renderer, request.cache_dir)
    with Progress() as bar:
        for group_id in bar.track(group_ids, description=f"rendering {len(group_ids)} groups ({renderer})"):
            build_group(groups[group_id], renderer, request.cache_dir)
    return (
        f"{cache.stats.renders} utterances rendered, {cache.stats.disk_hits} already cached, "
        f"in {request.cache_dir}"
    )


sub_app = typer.Typer(help="Onset: when does partial speech license an action?", no_args_is_help=True)


@sub_app.command("counts")
def counts_command() -> None:
    """Table 1 of the contrast groups: domains, groups, trajectories and prefix records per split."""
    from hear_gym.cli.common import console
    from hear_gym.envs.onset.groups.generator import select_groups
    from hear_gym.envs.onset.groups.model import N_PREFIXES, SPLITS

    rows = []
    for split in SPLITS:
        groups = select_groups(split)
        rows.append(
            {
                "split": split,
                "domains": len({g.domain for g in groups}),
                "groups": len(groups),
                "trajectories": 2 * len(groups),
                "prefix_records": sum(2 * len(g.renderings) * N_PREFIXES for g in groups),
            }
        )
    console.print_json(json.dumps(rows))


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="onset")
