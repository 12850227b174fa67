"""Hear2Act's commands: its part of ``hear-gym eval`` (``plan_eval``), ``hear-gym listen``
(``listen``) and ``hear-gym render`` (``render``), the scenario bank (``hear-gym scenarios``) and
probe training (``hear-gym train probe``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from hear_gym.cli.common import (
    ProsodyOption,
    agent_factory,
    agent_spec,
    available_agents,
    component,
    console,
    fail,
    option_value,
    output_file,
    prosody_table,
)
from hear_gym.cli.train import train_app
from hear_gym.core.run_config import Cell
from hear_gym.envs.hear2act.env import MIN_TURNS
from hear_gym.envs.hear2act.family import FAMILY, cell, run_config
from hear_gym.envs.hear2act.scenarios.bank import SPLITS, get_scenario, scenarios_for, split_of, write_bank
from hear_gym.eval.provenance import file_fingerprint
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import RENDERERS

FEEDBACKS = ("prosody", "explicit")
REWARD_OPTIONS = ("reward", "turn_cost", "patience")
DEFAULT_CELLS = ("transcript_only@T", "state_aware@T+S", "random@T")  # first = contrast base
SplitOption = Annotated[str, typer.Option(help=f"One of {', '.join(SPLITS)} or all.")]

scenarios_app = typer.Typer(
    help="Browse and export the Hear2Act scenario bank.", no_args_is_help=True, rich_markup_mode=None
)


def register(app: typer.Typer) -> None:
    app.add_typer(scenarios_app, name="scenarios")


# -- hear-gym eval ----------------------------------------------------------------------------
def plan_eval(request) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request for Hear2Act."""
    registered = available_agents(FAMILY)
    feedbacks = request.take("feedback", list(FEEDBACKS))
    cells = _cells(request.cells or list(DEFAULT_CELLS), feedbacks, registered)
    assistant = request.take("assistant", "text")
    max_turns = request.take("max_turns", 20)
    if max_turns < MIN_TURNS:
        raise typer.BadParameter(f"must be >= {MIN_TURNS}", param_hint="--max-turns")
    probes = {
        "state_inferrer": request.take("state_probe"),
        "affect_classifier": request.take("affect_probe"),
    }
    for access, flag, key in (
        ("T+S^", "--state-probe", "state_inferrer"),
        ("T+SER", "--affect-probe", "affect_classifier"),
    ):
        if probes[key] is None and any(c.access == access for c in cells):
            raise typer.BadParameter(
                f"{access} cells need a probe checkpoint (train one with `hear-gym train probe`)",
                param_hint=flag,
            )
    objects, plugins = _probe_plugins(probes)
    if request.audio_cache_dir is not None:
        objects["audio_cache_dir"] = request.audio_cache_dir
    env_kwargs = {"renderer": request.renderer, "prosody": request.prosody}
    for key in REWARD_OPTIONS:  # --option reward=tiered / turn_cost=0.02 / patience=3
        if key in request.family_options:
            env_kwargs[key] = option_value(request.take(key)[-1], key)
    intervention = request.take("state_intervention")
    if intervention is not None:
        if any(c.access != "T+S" for c in cells):
            raise typer.BadParameter(
                "it rewrites the T+S state channel: every --cell must be T+S "
                "(run the T baseline in its own folder)",
                param_hint="--state-intervention",
            )
        env_kwargs["state_intervention"] = intervention
    request.refuse_the_rest()
    try:
        config = run_config(
            cells,
            request.item_ids(),
            rollouts=request.rollouts,
            seed=request.seed,
            assistant=assistant,
            max_turns=max_turns,
            plugins=plugins,
            **env_kwargs,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    factories = {}
    for name in {c.agent for c in cells}:
        entry, checkpoint = agent_spec(name)
        factory = agent_factory(registered[entry], request.llm_client, checkpoint)
        factories[name] = _through_state_probe(name, factory, cells, objects)
    return config, factories, objects


def _through_state_probe(name: str, factory, cells: list, objects: dict):
    """The factory of an agent that weighs the T+S^ channel at the state probe's calibration
    (``through_state_inferrer``, e.g. the planner) when the run has a state probe; as is
    otherwise. Its rates are the T+S^ channel's, so the same agent under T+SER is refused."""
    through = getattr(factory, "through_state_inferrer", None)
    inferrer = objects.get("state_inferrer")
    if not callable(through) or inferrer is None:
        return factory
    if any(c.agent == name and c.access == "T+SER" for c in cells):
        raise typer.BadParameter(
            f"{name} weighs T+S^ at the state probe's rates, which are not the affect probe's: "
            f"run {name}@T+SER in its own folder",
            param_hint="--cell",
        )
    try:
        return through(inferrer)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--state-probe") from None


def _probe_plugins(checkpoints: dict[str, Path | None]) -> tuple[dict, tuple[tuple[str, str], ...]]:
    """(plug-in objects for gym.make, their description for the run record) from probe files."""
    objects, plugins = {}, []
    for key, path in checkpoints.items():
        if path is None:
            continue
        if not path.is_file():
            raise typer.BadParameter(f"no probe checkpoint at {path}")
        objects[key] = component(key)(path)
        plugins.append((key, file_fingerprint(path)))
    return objects, tuple(plugins)


def _cells(specs: list[str], feedbacks: list[str], registered: dict) -> list:
    """agent[@ACCESS] x feedback -> Cells, grouped by feedback (the first cell is the contrast base)."""
    cells = []
    for spec in specs:
        try:
            parsed = Cell.from_spec(spec, default_access="T")
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--cell") from None
        if agent_spec(parsed.agent)[0] not in registered:
            raise typer.BadParameter(
                f"unknown agent {parsed.agent!r}; registered: {sorted(registered)}", param_hint="--cell"
            )
        for fb in feedbacks:
            if fb not in FEEDBACKS:
                raise typer.BadParameter(f"feedback must be one of {FEEDBACKS}", param_hint="--feedback")
            cells.append(cell(parsed.agent, parsed.access, fb))
    return sorted(cells, key=lambda c: FEEDBACKS.index(c.option("feedback")))


# -- hear-gym scenarios -----------------------------------------------------------------------
@scenarios_app.command("export")
def scenarios_export(
    out: Annotated[Path, typer.Option(help="Destination .jsonl file.")], split: SplitOption = "all"
) -> None:
    """Write the scenario bank (or one split) as JSONL, one scenario per line."""
    count = write_bank(out, scenarios_for(split))
    console.print(f"wrote {count} scenarios to {out}")


@scenarios_app.command("list")
def scenarios_list(
    split: SplitOption = "all",
    domain: Annotated[str | None, typer.Option(help="Only this domain id.")] = None,
) -> None:
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
def scenarios_show(
    item_id: Annotated[
        str, typer.Argument(help="A scenario id (Hear2Act's item), e.g. budget_airline_tickets-03.")
    ],
) -> None:
    """Print one scenario in full, hidden concerns and gold included."""
    try:
        scenario = get_scenario(item_id)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]), param_hint="ITEM_ID") from None
    console.print_json(scenario.model_dump_json())


# -- hear-gym listen / render ----------------------------------------------------------------
def listen(request) -> str:
    """``hear-gym listen`` for Hear2Act: one dialogue of ``request.item_id`` (played by
    ``cell``, ``feedback`` realization, with ``--renderer``), its user turns written in every
    registered renderer side by side (``--option renderers=NAME``, repeatable, picks some) or,
    with ``every_label``, one sentence under every delivery label (``voice``, ``language``); the
    delivery plan table is ``prosody``."""
    import gymnasium as gym

    from hear_gym.envs.hear2act.listen import write_dialogue, write_label_gallery

    every_label = request.take("every_label")
    spec = request.take("cell", "state_aware@T+S")
    feedback = request.take("feedback", "prosody")
    prosody = prosody_table(request.take("prosody", DEFAULT_PROSODY))
    voice, language = request.take("voice", "m1"), request.take("language", "en")
    renderers = request.take("renderers", sorted(RENDERERS))
    request.refuse_the_rest()
    out, renderer = request.out, request.renderer
    try:
        if every_label is not None:
            paths = write_label_gallery(every_label, out, voice, language, renderer, prosody)
        elif request.item_id is not None:
            listener = Cell.from_spec(spec, default_access="T")
            registered = available_agents(FAMILY)
            if listener.agent not in registered:
                raise typer.BadParameter(
                    f"unknown agent {listener.agent!r}; registered: {sorted(registered)}", param_hint="--cell"
                )
            get_scenario(request.item_id)
            env = gym.make(
                FAMILY.env_id,
                access=listener.access,
                feedback=feedback,
                item_ids=[request.item_id],
                renderer=renderer,
                prosody=prosody,
            )
            agent = registered[listener.agent].load()()
            paths = write_dialogue(
                env, agent, request.item_id, out, request.seed, renderers, prosody, renderer
            )
        else:
            raise typer.BadParameter("give an ITEM_ID (a scenario id) or --every-label TEXT")
    except (KeyError, ValueError) as exc:
        fail(str(exc.args[0] if exc.args else exc))
    if every_label is not None:
        return f"wrote {len(paths)} WAV files and a text sidecar to {out}"
    return f"wrote {len(paths)} WAV files, dialogue.txt and index.html (side by side) to {out}"


def render(request) -> str:
    """``hear-gym render`` for Hear2Act: plan the split's user turns (``turns``: ``rollouts``,
    the standard rollouts of ``cell``s x ``feedback``s, ``rollouts`` each, as ``hear-gym eval``
    plays them; ``all``, every turn the users can say, what training hears), say what they will
    take on disk, then render them in ``workers`` processes into the disk cache (``audio``) and
    their prosodic features into the feature store (``features``); ``dry_run`` stops after the
    estimate."""
    from hear_gym.envs.hear2act.prerender import possible_requests, rollout_requests
    from hear_gym.speech.prewarm import cap_warning, estimate, prewarm

    turns = request.take("turns", "rollouts")
    feedbacks = request.take("feedback") or list(FEEDBACKS)
    prosody = prosody_table(request.take("prosody", DEFAULT_PROSODY))
    workers, dry_run = request.take("workers"), request.take("dry_run", False)
    keep_audio, features = request.take("audio", True), request.take("features", True)
    if turns == "all":
        for name, flag in (("cell", "--cell"), ("rollouts", "--rollouts")):
            if request.take(name) is not None:
                raise typer.BadParameter("--turns all renders every turn whatever plays", param_hint=flag)
    elif turns != "rollouts":
        raise typer.BadParameter("must be rollouts or all", param_hint="--turns")
    if not (keep_audio or features):
        raise typer.BadParameter(
            "with --no-audio, keep the features (drop --no-features)", param_hint="--no-audio"
        )
    if any(fb not in FEEDBACKS for fb in feedbacks):
        raise typer.BadParameter(f"feedback must be one of {FEEDBACKS}", param_hint="--feedback")
    if turns == "all":
        request.refuse_the_rest()
        requests = possible_requests(request.item_ids(), feedbacks, prosody)
    else:
        registered = available_agents(FAMILY)
        cells = _cells(request.take("cell") or list(DEFAULT_CELLS), feedbacks, registered)
        rollouts = request.take("rollouts", 1)
        request.refuse_the_rest()
        config = run_config(cells, request.item_ids(), rollouts=rollouts, seed=request.seed)
        factories = {c.agent: registered[c.agent].load() for c in cells}
        try:
            requests = rollout_requests(config, factories, prosody)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--cell") from None
    planned = estimate(requests)
    console.print(f"{request.split} ({turns} turns): {planned.describe(keep_audio, features)}")
    warning = cap_warning(planned, request.cache_dir) if keep_audio else None
    if warning:
        console.print(f"warning: {warning}")
    if dry_run:
        return "dry run: nothing rendered"
    tally = prewarm(
        requests,
        request.renderer,
        request.cache_dir if keep_audio else None,
        workers=workers,
        features=features,
        description=f"rendering ({request.renderer}, prosody {prosody})",
    )
    kept = f"in {request.cache_dir}" if keep_audio else "(features only)"
    return (
        f"{tally.rendered} utterances rendered, {tally.already_rendered} already cached, "
        f"{tally.measured} measured, {kept}"
    )


# -- hear-gym train probe ---------------------------------------------------------------------
@train_app.command("probe")
def train_probe_command(
    out: Annotated[Path, typer.Option(help="Checkpoint to write (.safetensors).")],
    task: Annotated[str, typer.Option(help="concern (for T+S^) or affect (for T+SER).")] = "concern",
    features: Annotated[
        str, typer.Option(help="prosody_relative, prosody, logmel or whole_turn_relative.")
    ] = "prosody_relative",
    renderer: Annotated[str, typer.Option(help="Renderer whose audio to learn from.")] = "espeak",
    prosody: ProsodyOption = DEFAULT_PROSODY,
    max_scenarios: Annotated[int | None, typer.Option(min=1, help="Per split, for quick runs.")] = None,
    max_false_resolved: Annotated[
        float | None,
        typer.Option(
            help="Concern probes: say resolved only where at most this share of the dev split's "
            "reluctant acceptances would (e.g. 0.01). Default: the more likely class."
        ),
    ] = None,
    assents_only: Annotated[
        bool,
        typer.Option(help="Concern probes: learn from the prosody-mediated shared assents alone."),
    ] = False,
    seed: int = 0,
) -> None:
    """Train an audio probe on rendered training-split audio; reports held-out accuracy."""
    train = component("train_probe")
    out = output_file(out)
    try:
        probe = train(
            out,
            task=task,
            features=features,
            renderer=renderer,
            prosody=prosody,
            max_scenarios=max_scenarios,
            max_false_resolved=max_false_resolved,
            assents_only=assents_only,
            seed=seed,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    table = Table(
        "split",
        *probe.config.classes,
        "balanced",
        "n",
        title=f"{task} probe ({features}, {renderer}, prosody {prosody})",
    )
    for split, report in probe.report.items():
        table.add_row(
            split,
            *(f"{report.get(c, float('nan')):.3f}" for c in probe.config.classes),
            f"{report['balanced']:.3f}",
            str(report["n"]),
        )
    console.print(table)
    if probe.threshold is not None:
        console.print(f"says resolved above log-odds {probe.threshold:.3f} (calibrated on dev)")
    console.print(f"checkpoint: {out}")
