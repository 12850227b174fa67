"""``hear-gym listen`` and ``hear-gym render``: any registered env's audio.

As with ``eval``, the generic options are the same for every family and ``--env`` picks the
family (Hear2Act by default). The family's command module does the work: ``listen(request)``
writes one episode's audio with a text sidecar and ``render(request)`` fills a disk render cache
for a split; each returns a line to print and takes its own options from the request (Hear2Act:
``--cell``, ``--feedback``, ``--prosody``, ...; any family: ``--option KEY=VALUE``), refusing
those it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from hear_gym.cli.common import (
    DEFAULT_ENV,
    EnvOption,
    FamilyOptionPairs,
    FamilyOptions,
    RendererOption,
    SeedOption,
    console,
    family_cli,
    family_options,
    split_item_ids,
)

# Hear2Act's own options on the generic commands (other families refuse them when set).
H2ACells = Annotated[
    list[str] | None,
    typer.Option(
        help="Hear2Act: agent@ACCESS whose rollouts to render, repeatable [default: the eval defaults]."
    ),
]
H2AFeedbacks = Annotated[
    list[str] | None, typer.Option(help="Hear2Act: prosody and/or explicit [default: both].")
]
H2AProsody = Annotated[
    str | None,
    typer.Option(help="Hear2Act: delivery plan table, paper or clear [default: paper] (see hear-gym eval)."),
]


@dataclass
class ListenRequest(FamilyOptions):
    """Everything ``hear-gym listen`` was given."""

    out: Path
    env: str
    item_id: str | None
    renderer: str = "espeak"
    seed: int = 0
    family_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class RenderRequest(FamilyOptions):
    """Everything ``hear-gym render`` was given."""

    cache_dir: Path
    env: str
    split: str
    renderer: str = "espeak"
    seed: int = 0
    family_options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None

    def item_ids(self) -> tuple[str, ...]:
        return split_item_ids(self.env, self.split, self.limit)


def listen_command(
    out: Annotated[Path, typer.Option(help="Folder for the WAV files and the text sidecar.")],
    item_id: Annotated[
        str | None,
        typer.Argument(help="The item to hear (its id; see the env's docs)."),
    ] = None,
    env: EnvOption = DEFAULT_ENV,
    renderer: RendererOption = "espeak",
    seed: SeedOption = 0,
    option: FamilyOptionPairs = None,
    every_label: Annotated[
        str | None,
        typer.Option(help="Hear2Act, instead of a dialogue: say this sentence under every delivery label."),
    ] = None,
    cell: Annotated[
        str | None,
        typer.Option(help="Hear2Act: agent@ACCESS that plays the dialogue [default: state_aware@T+S]."),
    ] = None,
    feedback: Annotated[
        str | None, typer.Option(help="Hear2Act: prosody or explicit [default: prosody].")
    ] = None,
    prosody: H2AProsody = None,
    voice: Annotated[
        str | None, typer.Option(help="Hear2Act: voice for --every-label [default: m1].")
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="Hear2Act: en or cmn, for --every-label [default: en].")
    ] = None,
) -> None:
    """Write what an episode's speakers say as WAVs (16 kHz) plus a text sidecar."""
    request = ListenRequest(
        out=out,
        env=env,
        item_id=item_id,
        renderer=renderer,
        seed=seed,
        family_options=family_options(
            option,
            every_label=every_label,
            cell=cell,
            feedback=feedback,
            prosody=prosody,
            voice=voice,
            language=language,
        ),
    )
    console.print(family_cli(env, "listen")(request))


def render_command(
    cache_dir: Annotated[
        Path, typer.Option(help="Disk cache to fill (pass the same folder to eval as --audio-cache-dir).")
    ],
    env: EnvOption = DEFAULT_ENV,
    split: Annotated[str, typer.Option(help="A split of the env's episodes, or all.")] = "test",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N episodes of the split.")] = None,
    renderer: RendererOption = "espeak",
    seed: SeedOption = 0,
    option: FamilyOptionPairs = None,
    cell: H2ACells = None,
    feedback: H2AFeedbacks = None,
    rollouts: Annotated[
        int | None, typer.Option(min=1, help="Hear2Act: rollouts per scenario [default: 1].")
    ] = None,
    prosody: H2AProsody = None,
    turns: Annotated[
        str | None,
        typer.Option(
            help="Hear2Act: rollouts (the turns of the cells' evaluation episodes) or all (every turn "
            "the users can say: what training hears) [default: rollouts]."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Hear2Act: processes that render [default: one per core].")
    ] = None,
    audio: Annotated[
        bool | None,
        typer.Option(
            "--audio/--no-audio",
            help="Hear2Act: keep the audio in the disk cache, or only the features (a feature "
            "observation needs no audio) [default: --audio].",
        ),
    ] = None,
    features: Annotated[
        bool | None,
        typer.Option(
            "--features/--no-features",
            help="Hear2Act: also store each turn's prosodic features [default: --features].",
        ),
    ] = None,
    dry_run: Annotated[
        bool | None, typer.Option("--dry-run", help="Hear2Act: print the plan's size and stop.")
    ] = None,
) -> None:
    """Pre-render a split's audio (and its prosodic features) into the disk caches, in parallel,
    so evaluations and training read it: prints the plan's size first, then a progress bar."""
    request = RenderRequest(
        cache_dir=cache_dir,
        env=env,
        split=split,
        limit=limit,
        renderer=renderer,
        seed=seed,
        family_options=family_options(
            option,
            cell=cell,
            feedback=feedback,
            rollouts=rollouts,
            prosody=prosody,
            turns=turns,
            workers=workers,
            audio=audio,
            features=features,
            dry_run=dry_run,
        ),
    )
    console.print(family_cli(env, "render")(request))
