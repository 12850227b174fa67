"""``hear-gym`` command line: scenarios, evaluation runs and reports."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from hear_gym.envs.voicegate.cli import app as voicegate_app
from hear_gym.core.paths import writable_file
from hear_gym.envs.hear2act.env import MIN_TURNS
from hear_gym.envs.hear2act.report import print_summary, to_markdown
from hear_gym.envs.hear2act.scenarios.bank import SPLITS, get_scenario, scenarios_for, split_of, write_bank
from hear_gym.speech.plans import DEFAULT_PROSODY, PROSODY_TABLES, check_prosody

# Plain Click help (rich_markup_mode=None): it wraps cleanly at 80 columns, rich's panels do not.
app = typer.Typer(help="hear_gym: environments for spoken agents that must listen before they act.",
                  no_args_is_help=True, add_completion=False, rich_markup_mode=None)
scenarios_app = typer.Typer(help="Browse and export the Hear2Act scenario bank.", no_args_is_help=True,
                            rich_markup_mode=None)
app.add_typer(scenarios_app, name="scenarios")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"hear-gym {version('hear-gym')}")
        raise typer.Exit()


VersionOption = Annotated[bool, typer.Option(
    "--version", callback=_print_version, is_eager=True,
    help="Print the version and exit (`hear-gym version`: every package and the git commit).")]


@app.callback()
def _main(version: VersionOption = False) -> None:
    """hear_gym: environments for spoken agents that must listen before they act."""


train_app = typer.Typer(help="Train models used by agents and access conditions (needs hear-gym[agents]).",
                        no_args_is_help=True, rich_markup_mode=None)
app.add_typer(train_app, name="train")
app.add_typer(voicegate_app, name="voicegate")
console = Console(width=None if Console().is_terminal else 200)

AGENT_GROUP = "hear_gym.agents"
FEEDBACKS = ("prosody", "explicit")
DEFAULT_CELLS = ("transcript_only@T", "state_aware@T+S", "random@T")  # first = contrast base
SplitOption = Annotated[str, typer.Option(help=f"One of {', '.join(SPLITS)} or all.")]
ProsodyOption = Annotated[str, typer.Option(
    help=f"Delivery plan table: {' or '.join(PROSODY_TABLES)} (paper: calibrated to the paper's listeners; "
         "clear: the original, near-trivially separable plans).")]


def output_file(path: Path) -> Path:
    """A checkpoint path that can be written (parents created), checked before training."""
    try:
        return writable_file(path)
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {path}: {exc}", param_hint="--out") from None


def available_agents() -> dict[str, object]:
    """Agent factories registered under the ``hear_gym.agents`` entry-point group."""
    return {ep.name: ep for ep in entry_points(group=AGENT_GROUP)}


def agent_factory(entry_point, llm_client: str | None):
    """The entry point's factory; agents built around a chat model get one from ``llm_client``."""
    factory = entry_point.load()
    if not getattr(factory, "needs_client", False):
        return factory
    if llm_client is None:
        raise typer.BadParameter(f"agent {entry_point.name!r} needs --llm-client "
                                 "(hf:<model>, hf-audio:<model> or openai:<url>@<model>)")
    from agents.llm.clients import ChatClientError
    from agents.llm.factory import ClientAgentFactory, check_spec

    try:
        check_spec(llm_client)
    except (ValueError, ChatClientError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--llm-client") from None
    return ClientAgentFactory(factory, llm_client)


@scenarios_app.command("export")
def scenarios_export(out: Annotated[Path, typer.Option(help="Destination .jsonl file.")],
                     split: SplitOption = "all") -> None:
    """Write the scenario bank (or one split) as JSONL, one scenario per line."""
    count = write_bank(out, scenarios_for(split))
    console.print(f"wrote {count} scenarios to {out}")


@scenarios_app.command("list")
def scenarios_list(split: SplitOption = "all",
                   domain: Annotated[str | None, typer.Option(help="Only this domain id.")] = None) -> None:
    """One line per scenario: id, split, family, opening request."""
    table = Table("scenario_id", "split", "family", "request")
    shown = 0
    for s in scenarios_for(split):
        if domain is None or s.domain == domain:
            table.add_row(s.scenario_id, split_of(s.domain, s.seed_index), s.family, s.request)
            shown += 1
    if domain is not None and shown == 0:
        raise typer.BadParameter(f"no scenarios for domain {domain!r}", param_hint="--domain")
    console.print(table)


@scenarios_app.command("show")
def scenarios_show(scenario_id: str) -> None:
    """Print one scenario in full, hidden concerns and gold included."""
    try:
        scenario = get_scenario(scenario_id)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]), param_hint="SCENARIO_ID") from None
    console.print_json(scenario.model_dump_json())


@app.command("eval")
def eval_command(
    out: Annotated[Path, typer.Option(help="Run folder (created; an existing one is resumed).")],
    cell: Annotated[list[str], typer.Option(
        help="agent@ACCESS, repeatable (e.g. state_aware@T+S). Agents: the hear_gym.agents entry points.")
    ] = list(DEFAULT_CELLS),
    feedback: Annotated[list[str], typer.Option(help="prosody and/or explicit, repeatable.")] = list(FEEDBACKS),
    split: SplitOption = "test",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N scenarios of the split.")] = None,
    rollouts: Annotated[int, typer.Option(min=1, help="Rollouts per scenario.")] = 1,
    seed: Annotated[int, typer.Option(help="Run seed; episode seeds derive from it.")] = 0,
    assistant: Annotated[str, typer.Option(help="text (with clarify) or spoken action set.")] = "text",
    max_turns: Annotated[int, typer.Option(min=MIN_TURNS, help="Assistant-turn budget, the opening included.")] = 20,
    markdown: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    renderer: Annotated[str, typer.Option(help="Speech renderer for audio-based conditions.")] = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
    state_probe: Annotated[Path | None, typer.Option(help="Concern probe checkpoint for T+S^ cells.")] = None,
    affect_probe: Annotated[Path | None, typer.Option(help="Affect probe checkpoint for T+SER cells.")] = None,
    audio_cache_dir: Annotated[Path | None, typer.Option(help="Disk render cache (see hear-gym render).")] = None,
    state_intervention: Annotated[str | None, typer.Option(
        help="Label-fidelity rung for T+S cells: all_resolved, all_unresolved or shuffled.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Parallel players (processes or Ray actors).")] = 1,
    backend: Annotated[str, typer.Option(help="processes, or ray (needs `pip install ray`).")] = "processes",
    batch_size: Annotated[int, typer.Option(
        min=1, help="Episodes per batched model call for LLM agents (lockstep play).")] = 1,
    llm_client: Annotated[str | None, typer.Option(
        help="For llm / audio_llm agents: hf:<model>, hf-audio:<model> or openai:<url>@<model>.")] = None,
    wandb_project: Annotated[str | None, typer.Option(
        help="Log the tables to this W&B project (offline unless WANDB_API_KEY is set).")] = None,
) -> None:
    """Evaluate agents on Hear2Act; writes results.jsonl and metadata.json into OUT."""
    from hear_gym.eval.pipeline import evaluate
    from hear_gym.eval.runner import RunConfig

    registered = available_agents()
    cells = _cells(cell, feedback, registered)
    for access, flag, checkpoint in (("T+S^", "--state-probe", state_probe), ("T+SER", "--affect-probe", affect_probe)):
        if checkpoint is None and any(c.access == access for c in cells):
            raise typer.BadParameter(f"{access} cells need a probe checkpoint (train one with "
                                     f"`hear-gym train probe`)", param_hint=flag)
    env_kwargs, options = _audio_plugins(renderer, _prosody(prosody), state_probe, affect_probe,
                                         audio_cache_dir)
    if state_intervention is not None:
        if any(c.access != "T+S" for c in cells):
            raise typer.BadParameter("it rewrites the T+S state channel: every --cell must be T+S "
                                     "(run the T baseline in its own folder)", param_hint="--state-intervention")
        env_kwargs["state_intervention"] = state_intervention
        options += (("state_intervention", state_intervention),)
    try:
        config = RunConfig(cells=tuple(cells),
                           scenario_ids=tuple(s.scenario_id for s in scenarios_for(split)[:limit]),
                           rollouts=rollouts, seed=seed, assistant=assistant, max_turns=max_turns,
                           env_options=options)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    factories = {name: agent_factory(registered[name], llm_client) for name in {c.agent for c in cells}}
    try:
        metadata = evaluate(out, config, factories, progress=progress, env_kwargs=env_kwargs, workers=workers,
                            backend=backend, batch_size=batch_size)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    print_summary(metadata, console)
    if markdown is not None:
        markdown.write_text(to_markdown(metadata), encoding="utf-8")
    if wandb_project is not None:
        from hear_gym.eval.wandb_log import log_to_wandb

        console.print(f"W&B run: {log_to_wandb(metadata, out, wandb_project)}")
    console.print(f"results: {out / 'results.jsonl'}  metadata: {out / 'metadata.json'}")


def _prosody(name: str) -> str:
    try:
        return check_prosody(name)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--prosody") from None


def _audio_plugins(renderer: str, prosody: str, state_probe: Path | None, affect_probe: Path | None,
                   audio_cache_dir: Path | None) -> tuple[dict, tuple[tuple[str, str], ...]]:
    """gym.make kwargs for audio-based conditions, and their description for the run record."""
    kwargs: dict = {"renderer": renderer, "prosody": prosody}
    options = [("renderer", renderer), ("prosody", prosody)]
    if audio_cache_dir is not None:
        kwargs["audio_cache_dir"] = audio_cache_dir
    for path, key, wrap in ((state_probe, "state_inferrer", "ConcernInferrer"),
                            (affect_probe, "affect_classifier", "AffectPredictor")):
        if path is None:
            continue
        try:
            import agents.hear2act.audio_probe as probes
        except ImportError as exc:
            raise typer.BadParameter(f"probes need torch: pip install 'hear-gym[agents]' ({exc})") from None
        if not path.is_file():
            raise typer.BadParameter(f"no probe checkpoint at {path}")
        kwargs[key] = getattr(probes, wrap)(probes.AudioProbe.load(path))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        options.append((key, f"{path.name}@sha256:{digest}"))
    return kwargs, tuple(options)


def _cells(specs: list[str], feedbacks: list[str], registered: dict) -> list:
    """agent[@ACCESS] x feedback -> Cells, grouped by feedback (the first cell is the contrast base)."""
    from hear_gym.eval.runner import Cell

    cells = []
    for spec in specs:
        agent, sep, access = spec.partition("@")
        if agent not in registered:
            raise typer.BadParameter(f"unknown agent {agent!r}; registered: {sorted(registered)}",
                                     param_hint="--cell")
        for fb in feedbacks:
            if fb not in FEEDBACKS:
                raise typer.BadParameter(f"feedback must be one of {FEEDBACKS}", param_hint="--feedback")
            cells.append(Cell(agent, access if sep else "T", fb))
    return sorted(cells, key=lambda c: FEEDBACKS.index(c.feedback))


@app.command("report")
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders written by hear-gym eval.")],
    markdown: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")] = None,
    plots: Annotated[bool, typer.Option(help="Write PNG figures into each run folder.")] = True,
    ladder: Annotated[Path | None, typer.Option(
        help="Write Figure 4 (1st% along the label-fidelity ladder) from these runs to this PNG.")] = None,
) -> None:
    """Recompute and print the tables of finished runs (from results.jsonl); PNG figures too."""
    from hear_gym.eval.pipeline import write_metadata

    chunks, summaries = [], []
    for run_dir in run_dirs:
        try:
            metadata = write_metadata(run_dir)
        except (FileNotFoundError, ValueError) as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
        console.print(f"[bold]{run_dir}[/bold]")
        print_summary(metadata, console)
        if plots:
            from hear_gym.envs.hear2act.plots import write_plots

            for path in write_plots(metadata, run_dir / "figures"):
                console.print(f"figure: {path}")
        chunks.append(f"### {run_dir}\n\n{to_markdown(metadata)}")
        summaries.append(metadata)
    if ladder is not None:
        from hear_gym.envs.hear2act.plots import ladder_plot, ladder_rungs

        console.print(f"figure: {ladder_plot({'': ladder_rungs(summaries)}, ladder)}")
    if markdown is not None:
        markdown.write_text("\n".join(chunks), encoding="utf-8")


@app.command("listen")
def listen_command(
    out: Annotated[Path, typer.Option(help="Folder for the WAV files and the text sidecar.")],
    scenario_id: Annotated[str | None, typer.Argument(help="Play one dialogue of this scenario.")] = None,
    every_label: Annotated[str | None, typer.Option(
        help="Instead of a dialogue: say this sentence under every delivery label.")] = None,
    cell: Annotated[str, typer.Option(help="agent@ACCESS that plays the dialogue.")] = "state_aware@T+S",
    feedback: Annotated[str, typer.Option(help="prosody or explicit.")] = "prosody",
    renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
    voice: Annotated[str, typer.Option(help="Voice for --every-label.")] = "m1",
    language: Annotated[str, typer.Option(help="en or cmn, for --every-label.")] = "en",
    seed: int = 0,
) -> None:
    """Write what the simulated user says as WAVs (16 kHz) plus a text sidecar."""
    import gymnasium as gym

    from hear_gym.envs.hear2act.listen import write_dialogue, write_label_gallery

    prosody = _prosody(prosody)
    try:
        if every_label is not None:
            paths = write_label_gallery(every_label, out, voice, language, renderer, prosody)
        elif scenario_id is not None:
            agent_name, _, access = cell.partition("@")
            registered = available_agents()
            if agent_name not in registered:
                raise typer.BadParameter(f"unknown agent {agent_name!r}; registered: {sorted(registered)}")
            get_scenario(scenario_id)
            env = gym.make("hear_gym/Hear2Act-v0", access=access or "T", feedback=feedback,
                           scenario_ids=[scenario_id], renderer=renderer, prosody=prosody)
            paths = write_dialogue(env, registered[agent_name].load()(), scenario_id, out, seed, renderer,
                                   prosody)
        else:
            raise typer.BadParameter("give a SCENARIO_ID or --every-label TEXT")
    except (KeyError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc.args[0] if exc.args else exc}")
        raise typer.Exit(2) from None
    console.print(f"wrote {len(paths)} WAV files and a text sidecar to {out}")


@app.command("render")
def render_command(
    cache_dir: Annotated[Path, typer.Option(help="Disk cache to fill (pass the same folder to the env "
                                                 "as audio_cache_dir).")],
    split: SplitOption = "test",
    cell: Annotated[list[str], typer.Option(help="agent@ACCESS whose rollouts to render, repeatable.")
                    ] = list(DEFAULT_CELLS),
    feedback: Annotated[list[str], typer.Option(help="prosody and/or explicit.")] = list(FEEDBACKS),
    rollouts: Annotated[int, typer.Option(min=1)] = 1,
    seed: int = 0,
    renderer: Annotated[str, typer.Option(help="espeak or praat.")] = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
) -> None:
    """Pre-render the user audio of a split's standard rollouts into a disk cache."""
    from hear_gym.envs.hear2act.prerender import prerender
    from hear_gym.eval.runner import RunConfig

    registered = available_agents()
    cells = _cells(cell, feedback, registered)
    config = RunConfig(cells=tuple(cells), scenario_ids=tuple(s.scenario_id for s in scenarios_for(split)),
                       rollouts=rollouts, seed=seed)
    stats = prerender(config, {c.agent: registered[c.agent].load() for c in cells}, cache_dir, renderer,
                      _prosody(prosody))
    console.print(f"{stats['rendered']} utterances rendered, {stats['already_on_disk']} already cached, "
                  f"in {cache_dir}")


@train_app.command("probe")
def train_probe_command(
    out: Annotated[Path, typer.Option(help="Checkpoint to write (.safetensors).")],
    task: Annotated[str, typer.Option(help="concern (for T+S^) or affect (for T+SER).")] = "concern",
    features: Annotated[str, typer.Option(help="prosody_relative, prosody or logmel.")] = "prosody_relative",
    renderer: Annotated[str, typer.Option(help="Renderer whose audio to learn from.")] = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
    max_scenarios: Annotated[int | None, typer.Option(min=1, help="Per split, for quick runs.")] = None,
    seed: int = 0,
) -> None:
    """Train an audio probe on rendered training-split audio; reports held-out accuracy."""
    try:
        from agents.hear2act.audio_probe import ProbeConfig, train_probe
    except ImportError as exc:
        console.print(f"[red]error:[/red] probes need torch: pip install 'hear-gym[agents]' ({exc})")
        raise typer.Exit(2) from None
    try:
        config = ProbeConfig(task=task, features=features, renderer=renderer, prosody=prosody,
                             max_scenarios=max_scenarios, seed=seed)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    probe = train_probe(config, output_file(out))
    table = Table("split", *probe.config.classes, "balanced", "n",
                  title=f"{task} probe ({features}, {renderer}, prosody {prosody})")
    for split, report in probe.report.items():
        table.add_row(split, *(f"{report.get(c, float('nan')):.3f}" for c in probe.config.classes),
                      f"{report['balanced']:.3f}", str(report["n"]))
    console.print(table)
    console.print(f"checkpoint: {out}")


@app.command("version")
def version_command() -> None:
    """Print versions and the git commit recorded in results."""
    from hear_gym.eval.provenance import provenance

    console.print_json(json.dumps(provenance()))


if __name__ == "__main__":
    app()
