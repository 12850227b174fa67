"""VoiceGate's commands: its part of ``hear-gym eval|listen|render --env hear_gym/VoiceGate-v0``
(``plan_eval``, ``listen``, ``render``) and ``hear-gym voicegate ...``: build the item set, listen, train the audio gate, evaluate, report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from hear_gym.cli.audio import ListenRequest, RenderRequest
from hear_gym.cli.common import (
    AudioCacheOption,
    BackendOption,
    BatchSizeOption,
    LLMClientOption,
    MarkdownOption,
    ProgressOption,
    RendererOption,
    SeedOption,
    WandbOption,
    WorkersOption,
    agent_factory,
    agent_spec,
    available_agents,
    component,
    console,
    output_file,
)
from hear_gym.cli.evaluate import EvalRequest, run_eval
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.run_folder import write_text_atomic, write_wav_atomic
from hear_gym.core.tables import print_tables
from hear_gym.core.tables import to_markdown as tables_markdown
from hear_gym.envs.voicegate.family import ENV_ID, EVAL_FAMILIES, FAMILY, item_ids
from hear_gym.envs.voicegate.items.generator import SIDE_TALK_CUES, check_side_talk_cue
from hear_gym.envs.voicegate.items.model import Family
from hear_gym.envs.voicegate.report import tables

sub_app = typer.Typer(
    help="VoiceGate: act, stay silent or answer (side-talk, self-talk, speaker-switch).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
FAMILIES = tuple(f.value for f in Family)
SideTalkCue = Annotated[
    str,
    typer.Option(
        help=f"Side-talk rendering, one of {', '.join(SIDE_TALK_CUES)}: none (both utterances near, the "
        "paper's design) or turned_away (the bystander-directed one turned away, an acoustic cue)."
    ),
]


def _families(names: list[str]) -> list[str]:
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        raise typer.BadParameter(
            f"unknown families {unknown}; families: {FAMILIES}", param_hint="--option family="
        )
    return names


def _side_talk_cue(value: str) -> str:
    try:
        return check_side_talk_cue(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--side-talk-cue") from None


@sub_app.command("build")
def build(
    out: Annotated[Path, typer.Option(help="Output folder (items.jsonl, audio/, manifest.jsonl).")],
    renderer: Annotated[str, typer.Option(help="espeak, praat or neural.")] = "espeak",
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes.")] = 2,
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Render every item (all families, both splits) to WAV with manifests."""
    from hear_gym.envs.voicegate.build import build_items

    summary = build_items(
        out, renderer=renderer, workers=workers, side_talk_cue=_side_talk_cue(side_talk_cue)
    )
    console.print_json(json.dumps(summary))


@sub_app.command("listen")
def listen_command(
    item_id: Annotated[str, typer.Argument(help="An item id, e.g. ss-unlock_door-03/switch.")],
    out: Annotated[Path, typer.Option(help="Folder for the WAV and its manifest.")],
    renderer: Annotated[str, typer.Option(help="espeak, praat or neural.")] = "espeak",
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Render one item to WAV, with its manifest and ground truth next to it (the same as
    ``hear-gym listen ITEM_ID --env hear_gym/VoiceGate-v0``)."""
    request = ListenRequest(out, ENV_ID, item_id, renderer, family_options={"side_talk_cue": [side_talk_cue]})
    console.print(listen(request))


def listen(request: ListenRequest) -> str:
    """``hear-gym listen`` for VoiceGate: one item's WAV, its manifest and ground truth (option
    ``side_talk_cue``)."""
    from hear_gym.envs.voicegate.build import wav_name
    from hear_gym.envs.voicegate.items.generator import all_items
    from hear_gym.envs.voicegate.scenes import render_item
    from hear_gym.speech.cache import shared_render_cache
    from hear_gym.speech.renderers import SAMPLE_RATE

    cue = _side_talk_cue(request.take("side_talk_cue", ["none"])[-1])
    request.refuse_the_rest()
    item_id, out = request.item_id, request.out
    item = next((i for i in all_items(cue) if i.item_id == item_id), None)
    if item is None:
        raise typer.BadParameter(
            f"{f'no item {item_id!r}' if item_id else 'give an ITEM_ID'} (see items.jsonl from `hear-gym voicegate build`, "
            "or ids like ss-unlock_door-03/switch, st-0-07, sf-sarcasm-12)",
            param_hint="ITEM_ID",
        )
    out.mkdir(parents=True, exist_ok=True)
    record = {"item": item.as_record()}
    lines = []
    if item.has_audio:
        waveform, record["manifest"] = render_item(item, shared_render_cache(request.renderer))
        write_wav_atomic(out / wav_name(item_id), waveform, SAMPLE_RATE)
        lines.append(f"wrote {out / wav_name(item_id)} ({len(waveform) / SAMPLE_RATE:.2f} s)")
    else:
        lines.append("text-only input: no audio")
    write_text_atomic(out / wav_name(item_id).replace(".wav", ".json"), json.dumps(record, indent=2))
    lines.append(f"transcript: {item.transcript}\ntarget: {record['item']['target']}")
    return "\n".join(lines)


def render(request: RenderRequest) -> str:
    """``hear-gym render`` for VoiceGate: every item of the split with audio (options ``family``,
    repeatable, and ``side_talk_cue``) rendered into the disk cache an env reads through
    ``audio_cache_dir``."""
    from rich.progress import Progress

    from hear_gym.envs.voicegate.items.generator import all_items
    from hear_gym.envs.voicegate.scenes import render_item
    from hear_gym.speech.cache import RenderCache
    from hear_gym.speech.renderers import make_renderer

    families = _families(request.take("family", list(EVAL_FAMILIES)))
    cue = _side_talk_cue(request.take("side_talk_cue", ["none"])[-1])
    request.refuse_the_rest()
    wanted = set(request.item_ids())
    items = [i for i in all_items(cue) if i.item_id in wanted and i.family.value in families and i.has_audio]
    cache = RenderCache(make_renderer(request.renderer), disk_dir=request.cache_dir)
    with Progress() as bar:
        for item in bar.track(items, description=f"rendering {len(items)} items ({request.renderer})"):
            render_item(item, cache)
    return (
        f"{cache.stats.renders} utterances rendered, {cache.stats.disk_hits} already cached, "
        f"in {request.cache_dir}"
    )


@sub_app.command("train-gate")
def train_gate_command(
    out: Annotated[Path, typer.Option(help="Checkpoint path (.safetensors).")],
    renderer: Annotated[str, typer.Option(help="espeak, praat or neural.")] = "espeak",
    training: Annotated[
        str,
        typer.Option(
            help="switch (the benchmark's pairs) or cue_balanced (field x gap crossed, labelled by source)."
        ),
    ] = "switch",
    seed: int = 0,
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Train the audio gate on the train split; print its held-out accuracy (needs hear-gym[agents])."""
    train = component("train_gate")
    cue = _side_talk_cue(side_talk_cue)
    out = output_file(out)
    try:
        gate = train(out, renderer=renderer, seed=seed, training=training, side_talk_cue=cue)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--training") from None
    console.print_json(json.dumps(gate.report))
    console.print(f"saved {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="voicegate")


def plan_eval(request: EvalRequest) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request for VoiceGate.
    Its own options (``--option``): ``family`` (repeatable; default speaker_switch, side_talk,
    self_talk), ``side_talk_cue``, ``gate_checkpoint`` (for audio_gate)."""
    families = _families(request.take("family", list(EVAL_FAMILIES)))
    cue = _side_talk_cue(request.take("side_talk_cue", ["none"])[-1])
    checkpoint = request.take("gate_checkpoint", [None])[-1]
    request.refuse_the_rest()
    specs = request.cells or ["text_only@T"]
    registered = available_agents(FAMILY)
    cells, factories = [], {}
    for spec in specs:
        try:
            cell = Cell.from_spec(spec, default_access="A+T")
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--cell") from None
        factories[cell.agent] = _agent_factory(
            cell.agent, registered, Path(checkpoint) if checkpoint else None, request.llm_client
        )
        cells.append(cell)
    if len({c.agent for c in cells}) != len(cells):
        raise typer.BadParameter("one cell per agent in a VoiceGate run", param_hint="--cell")
    episodes = request.item_ids()
    wanted = set(item_ids("all", tuple(families), cue))
    try:
        config = RunConfig(
            ENV_ID,
            tuple(cells),
            tuple(e for e in episodes if e in wanted),
            seed=request.seed,
            env_kwargs=(("renderer", request.renderer), ("side_talk_cue", cue)),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    objects = {"audio_cache_dir": request.audio_cache_dir} if request.audio_cache_dir else {}
    return config, factories, objects


def _agent_factory(spec: str, registered: dict, gate_checkpoint: Path | None, llm_client: str | None):
    """A picklable zero-argument factory for the gate agent ``NAME`` or ``NAME:CHECKPOINT``
    (an agent that plays a checkpoint, such as ``audio_gate``, also takes it from
    ``--gate-checkpoint`` / ``--option gate_checkpoint=PATH``)."""
    name, checkpoint = agent_spec(spec)
    if name not in registered:
        raise typer.BadParameter(f"unknown agent {name!r}; agents: {sorted(registered)}", param_hint="--cell")
    if (
        checkpoint is None
        and gate_checkpoint is not None
        and hasattr(registered[name].load(), "from_checkpoint")
    ):
        checkpoint = str(gate_checkpoint)
    return agent_factory(registered[name], llm_client, checkpoint)


@sub_app.command("eval")
def eval_command(
    out: Annotated[
        Path, typer.Option(help="Run folder (created; an existing one with the same config is resumed).")
    ],
    agent: Annotated[str, typer.Option(help="A hear_gym.agents.voicegate entry point.")] = "text_only",
    family: Annotated[
        list[str] | None,
        typer.Option(help=f"Repeatable; of {', '.join(FAMILIES)} [default: all but cue_validity]."),
    ] = None,
    split: Annotated[str, typer.Option(help="train, test or all.")] = "test",
    access: Annotated[str, typer.Option(help="A+T, A or T.")] = "A+T",
    renderer: RendererOption = "espeak",
    gate_checkpoint: Annotated[Path | None, typer.Option(help="For audio_gate.")] = None,
    llm_client: LLMClientOption = None,
    audio_cache_dir: AudioCacheOption = None,
    wandb_project: WandbOption = None,
    side_talk_cue: SideTalkCue = "none",
    seed: SeedOption = 0,
    workers: WorkersOption = 1,
    backend: BackendOption = "processes",
    batch_size: BatchSizeOption = 1,
    markdown: MarkdownOption = None,
    progress: ProgressOption = True,
) -> None:
    """Run one agent over the chosen families (the same as `hear-gym eval --env hear_gym/VoiceGate-v0`)."""
    options = {"family": list(family or EVAL_FAMILIES), "side_talk_cue": [side_talk_cue]}
    if gate_checkpoint is not None:
        options["gate_checkpoint"] = [str(gate_checkpoint)]
    request = EvalRequest(
        out=out,
        env=ENV_ID,
        cells=[f"{agent}@{access}"],
        split=split,
        seed=seed,
        renderer=renderer,
        audio_cache_dir=audio_cache_dir,
        llm_client=llm_client,
        family_options=options,
    )
    run_eval(
        request,
        workers=workers,
        backend=backend,
        batch_size=batch_size,
        progress=progress,
        markdown=markdown,
        wandb_project=wandb_project,
    )


def print_report(run_dir: Path) -> str:
    """Print the run's joint metrics and condition tables; return them as Markdown."""
    path = run_dir / "metadata.json"
    if not path.exists():
        raise typer.BadParameter(f"{run_dir} has no metadata.json", param_hint="RUN_DIR")
    metadata = json.loads(path.read_text("utf-8"))
    laid_out = tables(metadata)
    print_tables(laid_out, console)
    return tables_markdown(laid_out)


@sub_app.command("report")
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="VoiceGate run folders.")],
    markdown: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")] = None,
) -> None:
    """Print the joint metrics and per-condition tables of VoiceGate runs."""
    text = "\n".join(print_report(d) for d in run_dirs)
    if markdown is not None:
        write_text_atomic(markdown, text)
        console.print(f"wrote {markdown}")
