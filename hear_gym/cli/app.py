"""The ``hear-gym`` app: generic commands (eval, report, listen, render, train, version) and every
family's own commands, found through the registry."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import import_module
from pathlib import Path
from typing import Annotated

import typer

from hear_gym.cli.audio import listen_command, render_command
from hear_gym.cli.common import DEFAULT_ENV, console, fail
from hear_gym.cli.evaluate import eval_command
from hear_gym.cli.serve import serve_command
from hear_gym.cli.train import train_app
from hear_gym.cli.train_llm import train_grpo_command, train_sft_command  # noqa: F401  (train sft / grpo)
from hear_gym.cli.view import view_command
from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_folder import RunFolderBusy, write_text_atomic
from hear_gym.core.tables import print_tables, to_markdown

# Plain Click help (rich_markup_mode=None): it wraps cleanly at 80 columns, rich's panels do not.
app = typer.Typer(
    help="hear_gym: environments for spoken agents that must listen before they act.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"hear-gym {version('hear-gym')}")
        raise typer.Exit()


VersionOption = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit (`hear-gym version`: every package and the git commit).",
    ),
]


@app.callback()
def _main(version: VersionOption = False) -> None:
    """hear_gym: environments for spoken agents that must listen before they act."""


app.command("eval")(eval_command)
app.command("listen")(listen_command)
app.command("render")(render_command)
app.add_typer(train_app, name="train")
app.command("serve")(serve_command)
app.command("view")(view_command)


@app.command("report")
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders written by hear-gym eval.")],
    markdown: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")] = None,
    plots: Annotated[bool, typer.Option(help="Write the family's PNG figures into each run folder.")] = True,
    ladder: Annotated[
        Path | None,
        typer.Option(
            help="Write one figure across these runs to this PNG (Hear2Act: Figure 4, 1st% along the "
            "label-fidelity ladder)."
        ),
    ] = None,
) -> None:
    """Recompute and print the tables of finished runs (from results.jsonl); figures too."""
    from hear_gym.eval.folder import writing_into
    from hear_gym.eval.pipeline import write_metadata

    chunks, summaries = [], []
    for run_dir in run_dirs:
        try:
            with writing_into(run_dir):  # a run still writing into it is refused
                metadata = write_metadata(run_dir)
                env_family = family(metadata["env_id"])
                console.print(f"[bold]{run_dir}[/bold]")
                tables = env_family.tables(metadata)
                print_tables(tables, console)
                if plots and env_family.figures is not None:
                    for path in _write_figures(env_family, metadata, run_dir):
                        console.print(f"figure: {path}")
        except (ValueError, OSError, RunFolderBusy) as exc:
            fail(str(exc))
        chunks.append(f"### {run_dir}\n\n{to_markdown(tables)}")
        summaries.append(metadata)
    if ladder is not None:
        compare = family(summaries[0]["env_id"]).compare_figure
        if compare is None or len({s["env_id"] for s in summaries}) > 1:
            fail("--ladder needs runs of one family that has a comparison figure (Hear2Act)")
        console.print(f"figure: {compare(summaries, ladder)}")
    if markdown is not None:
        write_text_atomic(markdown, "\n".join(chunks))


def _write_figures(env_family, metadata: dict, run_dir: Path) -> list[Path]:
    """The family's figures, drawn into a fresh folder and moved into ``run_dir/figures``: a
    rename replaces a link planted under a figure's name instead of writing through it."""
    figures = run_dir / "figures"
    if figures.is_symlink():
        raise OSError(f"{figures} is a symbolic link; figures are written only into a real folder")
    figures.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=run_dir, prefix=".figures.") as staging:
        made = [Path(path) for path in env_family.figures(metadata, Path(staging))]
        for path in made:
            os.replace(path, figures / path.name)
    return [figures / path.name for path in made]


@app.command("version")
def version_command(
    env: Annotated[str, typer.Option(help="Whose scenario generator version to show.")] = DEFAULT_ENV,
) -> None:
    """Print versions and the git commit recorded in results."""
    from hear_gym.eval.provenance import provenance

    console.print_json(json.dumps(provenance(env)))


for _env_id in env_ids():  # each family adds its own commands
    _module = family(_env_id).cli
    if _module is not None:
        import_module(_module).register(app)
