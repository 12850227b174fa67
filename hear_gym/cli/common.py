"""What every ``hear-gym`` command shares: the console, clear one-line errors, agents and other
components found by entry point (the CLI never imports ``agents`` or ``training``)."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from hear_gym.core.paths import writable_file
from hear_gym.core.registry import family
from hear_gym.speech.plans import PROSODY_TABLES, check_prosody

console = Console(width=None if Console().is_terminal else 200)
COMPONENT_GROUP = "hear_gym.components"
# Options several commands share, declared once.
SeedOption = Annotated[int, typer.Option(help="Run seed; episode seeds derive from it.")]
RendererOption = Annotated[str, typer.Option(help="Speech renderer: espeak or praat.")]
AudioCacheOption = Annotated[Path | None, typer.Option(help="On-disk render cache (see hear-gym render).")]
WorkersOption = Annotated[int, typer.Option(min=1, help="Parallel players (processes or Ray actors).")]
BackendOption = Annotated[str, typer.Option(help="processes, or ray (needs `pip install ray`).")]
BatchSizeOption = Annotated[
    int, typer.Option(min=1, help="Episodes per batched model call for LLM agents (lockstep play).")
]
LLMClientOption = Annotated[
    str | None,
    typer.Option(help="For llm / audio_llm agents: hf:<model>, hf-audio:<model> or openai:<url>@<model>."),
]
WandbOption = Annotated[
    str | None, typer.Option(help="Log the tables to this W&B project (offline unless WANDB_API_KEY is set).")
]
MarkdownOption = Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")]
ProgressOption = Annotated[bool, typer.Option(help="Show a progress bar.")]
ProsodyOption = Annotated[
    str,
    typer.Option(
        help=f"Delivery plan table: {' or '.join(PROSODY_TABLES)} (paper: calibrated to the paper's listeners; "
        "clear: the original, near-trivially separable plans)."
    ),
]


def fail(message: str) -> NoReturn:
    """One line on the console, exit status 2, no traceback."""
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


def family_cli(env_id: str):
    """The module with a family's commands (``EnvFamily.cli``)."""
    try:
        env_family = family(env_id)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--env") from None
    if env_family.cli is None:
        raise typer.BadParameter(f"{env_id} has no command-line support", param_hint="--env")
    return import_module(env_family.cli)


def output_file(path: Path) -> Path:
    """A checkpoint path that can be written (parents created), checked before training."""
    try:
        return writable_file(path)
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {path}: {exc}", param_hint="--out") from None


def prosody_table(name: str) -> str:
    try:
        return check_prosody(name)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--prosody") from None


def available_agents(group: str) -> dict[str, object]:
    """Agent factories registered under an entry-point group (a family's ``agent_group``)."""
    return {ep.name: ep for ep in entry_points(group=group)}


def agent_factory(entry_point, llm_client: str | None):
    """The entry point's factory; agents built around a chat model get one from ``llm_client``."""
    factory = entry_point.load()
    if not getattr(factory, "needs_client", False):
        return factory
    if llm_client is None:
        raise typer.BadParameter(
            f"agent {entry_point.name!r} needs --llm-client "
            "(hf:<model>, hf-audio:<model> or openai:<url>@<model>)"
        )
    try:
        return factory.from_client_spec(llm_client)
    except (ValueError, RuntimeError) as exc:  # a bad spec; no such model here; no server
        raise typer.BadParameter(str(exc), param_hint="--llm-client") from None


def component(name: str):
    """A trainer or plug-in registered under ``hear_gym.components`` (by the agents package)."""
    found = {ep.name: ep for ep in entry_points(group=COMPONENT_GROUP)}
    if name not in found:
        fail(f"{name!r} needs the agents package: pip install 'hear-gym[agents]'")
    try:
        return found[name].load()
    except ImportError as exc:
        fail(f"{name!r} needs hear-gym[agents] ({exc})")
