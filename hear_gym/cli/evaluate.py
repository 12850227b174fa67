"""``hear-gym eval``: any registered env through the one runner.

The generic options are the same for every family; ``--env`` picks the family (Hear2Act by
default, so the commands of earlier versions keep working). The family's command module turns
the request into a run: ``plan_eval(request) -> (RunConfig, agent factories, env objects)``, and
reads the options that are its own (Hear2Act: ``--feedback``, ``--assistant``, ``--max-turns``,
the probes, the intervention; any family: ``--option KEY=VALUE``), refusing those it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from hear_gym.cli.common import (
    DEFAULT_ENV,
    AudioCacheOption,
    BackendOption,
    BatchSizeOption,
    EnvOption,
    FamilyOptionPairs,
    FamilyOptions,
    LLMClientOption,
    LLMDtypeOption,
    MarkdownOption,
    ProgressOption,
    ProsodyOption,
    RendererOption,
    SeedOption,
    TrustRemoteCodeOption,
    WandbOption,
    WorkersOption,
    client_spec,
    console,
    fail,
    family_cli,
    family_options,
    prosody_table,
    split_item_ids,
)
from hear_gym.core.registry import family
from hear_gym.core.run_folder import RunFolderBusy, write_text_atomic
from hear_gym.core.tables import print_tables, to_markdown
from hear_gym.speech.plans import DEFAULT_PROSODY


@dataclass
class EvalRequest(FamilyOptions):
    """Everything ``hear-gym eval`` was given (family-specific options in ``family_options``)."""

    out: Path
    env: str
    cells: list[str]
    split: str
    limit: int | None = None
    rollouts: int = 1
    seed: int = 0
    renderer: str = "espeak"
    prosody: str = DEFAULT_PROSODY
    audio_cache_dir: Path | None = None
    llm_client: str | None = None
    family_options: dict[str, Any] = field(default_factory=dict)

    def item_ids(self) -> tuple[str, ...]:
        return split_item_ids(self.env, self.split, self.limit)


def run_eval(
    request: EvalRequest,
    *,
    workers: int = 1,
    backend: str = "processes",
    batch_size: int = 1,
    progress: bool = True,
    markdown: Path | None = None,
    wandb_project: str | None = None,
) -> dict:
    """Plan the request with its family, run it (resuming a folder with the same config), print
    the tables; returns the run's metadata. The run folder's writer lock is held throughout, so
    a second run into the same folder is refused, not interleaved."""
    from hear_gym.eval.folder import writing_into
    from hear_gym.eval.pipeline import evaluate
    from hear_gym.eval.wandb_log import WandbStartError, log_to_wandb

    if request.out.exists() and not request.out.is_dir():
        fail(f"--out {request.out} is a file; give a run folder (it is created if missing)")
    config, agents, env_objects = family_cli(request.env, "plan_eval")(request)
    try:
        with writing_into(request.out):
            metadata = evaluate(
                request.out,
                config,
                agents,
                progress=progress,
                env_objects=env_objects,
                workers=workers,
                backend=backend,
                batch_size=batch_size,
            )
            tables = family(request.env).tables(metadata)
            print_tables(tables, console)
            if markdown is not None:
                write_text_atomic(markdown, to_markdown(tables))
            if wandb_project is not None:
                console.print(f"W&B run: {log_to_wandb(metadata, request.out, wandb_project)}")
    except (ValueError, OSError, RunFolderBusy, WandbStartError) as exc:
        fail(str(exc))  # a bad setting, a busy folder, a link where a file goes, no W&B server
    console.print(f"results: {request.out / 'results.jsonl'}  metadata: {request.out / 'metadata.json'}")
    return metadata


def eval_command(
    out: Annotated[Path, typer.Option(help="Run folder (created; an existing one is resumed).")],
    env: EnvOption = DEFAULT_ENV,
    cell: Annotated[
        list[str] | None,
        typer.Option(
            help="agent@ACCESS, repeatable (e.g. state_aware@T+S). Agents: the family's entry points. "
            "Default: the family's baseline cells."
        ),
    ] = None,
    split: Annotated[str, typer.Option(help="A split of the env's episodes, or all.")] = "test",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N episodes of the split.")] = None,
    rollouts: Annotated[int, typer.Option(min=1, help="Rollouts per episode.")] = 1,
    seed: SeedOption = 0,
    markdown: MarkdownOption = None,
    progress: ProgressOption = True,
    renderer: RendererOption = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
    audio_cache_dir: AudioCacheOption = None,
    workers: WorkersOption = 1,
    backend: BackendOption = "processes",
    batch_size: BatchSizeOption = 1,
    llm_client: LLMClientOption = None,
    dtype: LLMDtypeOption = None,
    trust_remote_code: TrustRemoteCodeOption = False,
    wandb_project: WandbOption = None,
    option: FamilyOptionPairs = None,
    feedback: Annotated[
        list[str] | None, typer.Option(help="Hear2Act: prosody and/or explicit, repeatable [default: both].")
    ] = None,
    assistant: Annotated[
        str | None, typer.Option(help="Hear2Act: text (with clarify) or spoken action set [default: text].")
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option(help="Hear2Act: assistant-turn budget, the opening included [default: 20].")
    ] = None,
    state_probe: Annotated[
        Path | None, typer.Option(help="Hear2Act: concern probe checkpoint for T+S^.")
    ] = None,
    affect_probe: Annotated[
        Path | None, typer.Option(help="Hear2Act: affect probe checkpoint for T+SER.")
    ] = None,
    state_intervention: Annotated[
        str | None,
        typer.Option(
            help="Hear2Act: label-fidelity rung for T+S cells: all_resolved, all_unresolved or shuffled."
        ),
    ] = None,
) -> None:
    """Evaluate agents on an env; writes results.jsonl and metadata.json into OUT."""
    options = family_options(
        option,
        feedback=feedback,
        assistant=assistant,
        max_turns=max_turns,
        state_probe=state_probe,
        affect_probe=affect_probe,
        state_intervention=state_intervention,
    )
    request = EvalRequest(
        out=out,
        env=env,
        cells=list(cell or ()),
        split=split,
        limit=limit,
        rollouts=rollouts,
        seed=seed,
        renderer=renderer,
        prosody=prosody_table(prosody),
        audio_cache_dir=audio_cache_dir,
        llm_client=client_spec(llm_client, dtype, trust_remote_code),
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
