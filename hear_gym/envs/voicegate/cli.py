"""``hear-gym voicegate ...``: build the VoiceGate item set, train the audio gate, evaluate, report."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from hear_gym.envs.voicegate.items.generator import SIDE_TALK_CUES, check_side_talk_cue, conditions_of
from hear_gym.envs.voicegate.items.model import Family

app = typer.Typer(
    help="VoiceGate: act, stay silent or answer (side-talk, self-talk, speaker-switch).", no_args_is_help=True,
    rich_markup_mode=None,
)
console = Console(width=None if Console().is_terminal else 200)
AGENT_GROUP = "hear_gym.gate_agents"
FAMILIES = tuple(f.value for f in Family)
SideTalkCue = Annotated[str, typer.Option(
    help=f"Side-talk rendering, one of {', '.join(SIDE_TALK_CUES)}: none (both utterances near, the "
    "paper's design) or turned_away (the bystander-directed one turned away, an acoustic cue).")]


def _side_talk_cue(value: str) -> str:
    try:
        return check_side_talk_cue(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--side-talk-cue") from None


def available_gate_agents() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=AGENT_GROUP)}


@app.command("build")
def build(
    out: Annotated[Path, typer.Option(help="Output folder (items.jsonl, audio/, manifest.jsonl).")],
    renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes.")] = 2,
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Render every item (all families, both splits) to WAV with manifests."""
    from hear_gym.envs.voicegate.build import build_items

    summary = build_items(out, renderer=renderer, workers=workers,
                          side_talk_cue=_side_talk_cue(side_talk_cue))
    console.print_json(json.dumps(summary))


@app.command("listen")
def listen(item_id: Annotated[str, typer.Argument(help="An item id, e.g. ss-unlock_door-03/switch.")],
           out: Annotated[Path, typer.Option(help="Folder for the WAV and its manifest.")],
           renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
           side_talk_cue: SideTalkCue = "none") -> None:
    """Render one item to WAV, with its manifest and ground truth next to it."""
    import soundfile as sf

    from hear_gym.envs.voicegate.build import wav_name
    from hear_gym.envs.voicegate.items.generator import all_items
    from hear_gym.speech.cache import shared_render_cache
    from hear_gym.envs.voicegate.scenes import render_item

    item = next((i for i in all_items(_side_talk_cue(side_talk_cue)) if i.item_id == item_id), None)
    if item is None:
        raise typer.BadParameter(f"no item {item_id!r} (see {out}/items.jsonl from `voicegate build`, "
                                 "or ids like ss-unlock_door-03/switch, st-0-07, sf-sarcasm-12)", param_hint="ITEM_ID")
    out.mkdir(parents=True, exist_ok=True)
    record = {"item": item.as_record()}
    if item.has_audio:
        waveform, record["manifest"] = render_item(item, shared_render_cache(renderer))
        sf.write(out / wav_name(item_id), waveform, 16_000, subtype="PCM_16")
        console.print(f"wrote {out / wav_name(item_id)} ({len(waveform) / 16_000:.2f} s)")
    else:
        console.print("text-only input: no audio")
    (out / wav_name(item_id).replace(".wav", ".json")).write_text(json.dumps(record, indent=2), encoding="utf-8")
    console.print(f"transcript: {item.transcript}\ntarget: {record['item']['target']}")


@app.command("train-gate")
def train_gate_command(
    out: Annotated[Path, typer.Option(help="Checkpoint path (.safetensors).")],
    renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
    training: Annotated[str, typer.Option(
        help="switch (the benchmark's pairs) or cue_balanced (field x gap crossed, labelled by source).")] = "switch",
    seed: int = 0,
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Train the audio gate on the train split; print its held-out accuracy (needs hear-gym[agents])."""
    from agents.voicegate.audio_gate import GateConfig, train_gate
    from hear_gym.cli import output_file

    config = GateConfig(renderer=renderer, seed=seed, training=training,
                        side_talk_cue=_side_talk_cue(side_talk_cue))
    out = output_file(out)
    try:
        gate = train_gate(config, out)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--training") from None
    console.print_json(json.dumps(gate.report))
    console.print(f"saved {out}")


def _make_agent(name: str, gate_checkpoint: Path | None, llm_client: str | None):
    from hear_gym.cli import agent_factory

    agents = available_gate_agents()
    if name not in agents:
        raise typer.BadParameter(f"unknown agent {name!r}; agents: {sorted(agents)}", param_hint="--agent")
    factory = agent_factory(agents[name], llm_client)
    if hasattr(factory, "from_checkpoint"):
        if gate_checkpoint is None:
            raise typer.BadParameter(f"agent {name!r} needs --gate-checkpoint (see `voicegate train-gate`)")
        return factory.from_checkpoint(gate_checkpoint)
    return factory()


@app.command("eval")
def eval_command(
    out: Annotated[
        Path, typer.Option(help="Run folder (created; an existing one with the same config is resumed).")
    ],
    agent: Annotated[str, typer.Option(help="A hear_gym.gate_agents entry point.")] = "text_only",
    family: Annotated[list[str], typer.Option(help=f"Repeatable; of {', '.join(FAMILIES)}.")] = [
        "speaker_switch",
        "side_talk",
        "self_talk",
    ],
    split: Annotated[str, typer.Option(help="train, test or all.")] = "test",
    access: Annotated[str, typer.Option(help="A+T, A or T.")] = "A+T",
    renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
    gate_checkpoint: Annotated[Path | None, typer.Option(help="For audio_gate.")] = None,
    llm_client: Annotated[str | None, typer.Option(
        help="For llm / audio_llm: hf:<model>, hf-audio:<model> or openai:<url>@<model>.")] = None,
    audio_cache_dir: Annotated[Path | None, typer.Option(help="On-disk render cache.")] = None,
    wandb_project: Annotated[str | None, typer.Option(
        help="Log the tables to this W&B project (offline unless WANDB_API_KEY is set).")] = None,
    side_talk_cue: SideTalkCue = "none",
) -> None:
    """Run one agent over the chosen families; write results.jsonl and metadata.json."""
    from hear_gym.envs.voicegate.runner import GateRunConfig, run_gate_evaluation

    unknown = sorted(set(family) - set(FAMILIES))
    if unknown:
        raise typer.BadParameter(f"unknown families {unknown}; families: {FAMILIES}", param_hint="--family")
    if split not in ("train", "test", "all"):
        raise typer.BadParameter("split must be train, test or all", param_hint="--split")
    config = GateRunConfig(
        agent=agent,
        families=tuple(family),
        split=None if split == "all" else split,
        access=access,
        renderer=renderer,
        side_talk_cue=_side_talk_cue(side_talk_cue),
    )
    try:
        run_gate_evaluation(_make_agent(agent, gate_checkpoint, llm_client), out, config, audio_cache_dir=audio_cache_dir)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    print_report(out)
    if wandb_project is not None:
        from hear_gym.eval.wandb_log import log_gate_to_wandb

        metadata = json.loads((out / "metadata.json").read_text("utf-8"))
        console.print(f"W&B run: {log_gate_to_wandb(metadata, out, wandb_project)}")


def print_report(run_dir: Path) -> str:
    """Print the run's joint metrics and condition tables; return them as Markdown."""
    path = run_dir / "metadata.json"
    if not path.exists():
        raise typer.BadParameter(f"{run_dir} has no metadata.json", param_hint="RUN_DIR")
    metadata = json.loads(path.read_text("utf-8"))
    lines = [
        f"### {metadata['config']['agent']} @ {metadata['config']['access']}",
        "",
        "| metric | % [95% CI] | groups |",
        "|---|---|---|",
    ]
    table = Table(
        "metric",
        "% [95% CI]",
        "groups",
        title=f"{metadata['config']['agent']} @ {metadata['config']['access']}",
    )
    for name, est in metadata["metrics"].items():
        cell = _pct(est)
        table.add_row(name, cell, str(est["n_scenarios"]))
        lines.append(f"| {name} | {cell} | {est['n_scenarios']} |")
    console.print(table)
    for family, rows in metadata["conditions"].items():
        order = conditions_of(family)
        sub = Table("condition", "mute %", "matching tool %", "accuracy %", title=family)
        lines += [
            "",
            f"**{family}**",
            "",
            "| condition | mute % | matching tool % | accuracy % |",
            "|---|---|---|---|",
        ]
        for condition in (c for c in order if c in rows):
            cells = [_pct(rows[condition][k]) for k in ("mute", "matching_tool", "accuracy")]
            sub.add_row(condition, *cells)
            lines.append(f"| {condition} | " + " | ".join(cells) + " |")
        console.print(sub)
    return "\n".join(lines) + "\n"


def _pct(est: dict | None) -> str:
    if est is None:
        return "-"
    return f"{100 * est['point']:.1f} [{100 * est['low']:.1f}, {100 * est['high']:.1f}]"


@app.command("report")
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="VoiceGate run folders.")],
    markdown: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")] = None,
) -> None:
    """Print the joint metrics and per-condition tables of VoiceGate runs."""
    text = "\n".join(print_report(d) for d in run_dirs)
    if markdown is not None:
        markdown.write_text(text, encoding="utf-8")
        console.print(f"wrote {markdown}")
