"""What every ``hear-gym`` command shares: the console, clear one-line errors, agents and other
components found by entry point (the CLI never imports ``agents`` or ``training``)."""

from __future__ import annotations

import functools
import json
import math
import warnings
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from hear_gym.core.family import EnvFamily
from hear_gym.core.paths import writable_file
from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_config import Cell
from hear_gym.speech.plans import PROSODY_TABLES, check_prosody

console = Console(width=None if Console().is_terminal else 200)
COMPONENT_GROUP = "hear_gym.components"
DEFAULT_ENV = "hear_gym/Hear2Act-v0"  # what the commands of earlier versions played
# Options several commands share, declared once.
EnvOption = Annotated[str, typer.Option(help=f"Env id, one of {', '.join(env_ids())}.")]
SeedOption = Annotated[int, typer.Option(help="Run seed; episode seeds derive from it.")]
RendererOption = Annotated[
    str,
    typer.Option(help="Speech renderer: espeak, praat or neural (needs hear-gym[neural]; docs/speech.md)."),
]
AudioCacheOption = Annotated[Path | None, typer.Option(help="On-disk render cache (see hear-gym render).")]
WorkersOption = Annotated[int, typer.Option(min=1, help="Parallel players (processes or Ray actors).")]
BackendOption = Annotated[str, typer.Option(help="processes, or ray (needs `pip install ray`).")]
BatchSizeOption = Annotated[
    int, typer.Option(min=1, help="Episodes per batched model call for LLM agents (lockstep play).")
]
LLMClientOption = Annotated[
    str | None,
    typer.Option(
        help="For llm / audio_llm agents: hf:<model>, hf-audio:<model> or openai:<url>@<model>; "
        "hf: and hf-audio: take ?device=auto|cpu|cuda[:N] (default auto)&dtype=...&max_new_tokens=N, "
        "openai: takes ?concurrency=N&timeout=S&retries=N&max_tokens=N (docs/bring-your-own-model.md)."
    ),
]
LLMDtypeOption = Annotated[
    str | None,
    typer.Option(
        "--dtype",
        help="An hf: or hf-audio: model's weights: auto (bfloat16 on a GPU that has it, else float32), "
        "bf16, fp16 or fp32 (the spec's own ?dtype= wins).",
    ),
]
TrustRemoteCodeOption = Annotated[
    bool,
    typer.Option(
        help="Load an hf: or hf-audio: checkpoint that ships its own code (auto_map), running that code here."
    ),
]
LOCAL_CLIENTS = ("hf:", "hf-audio:")
WandbOption = Annotated[
    str | None, typer.Option(help="Log the tables to this W&B project (offline unless WANDB_API_KEY is set).")
]
MarkdownOption = Annotated[Path | None, typer.Option(help="Also write the tables as Markdown.")]
ProgressOption = Annotated[bool, typer.Option(help="Show a progress bar.")]
FamilyOptionPairs = Annotated[
    list[str] | None,
    typer.Option(
        help="KEY=VALUE, repeatable: an option of the env's family (e.g. VoiceGate family=side_talk)."
    ),
]
ProsodyOption = Annotated[
    str,
    typer.Option(
        help=f"Delivery plan table: {' or '.join(PROSODY_TABLES)} (paper: calibrated to the paper's listeners; "
        "clear: the original, near-trivially separable plans)."
    ),
]


def fail(message: str) -> NoReturn:
    """One line on the console, exit status 2, no traceback. The message is plain text: the
    brackets of ``pip install 'hear-gym[rllib]'`` are not rich markup."""
    console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)  # one line, however long
    raise typer.Exit(2)


def family_cli(env_id: str, job: str):
    """The function ``job`` (plan_eval, listen, render) of a family's command module
    (``EnvFamily.cli``)."""
    try:
        env_family = family(env_id)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--env") from None
    module = import_module(env_family.cli) if env_family.cli is not None else None
    if not hasattr(module, job):
        raise typer.BadParameter(f"{env_id} has no {job} support", param_hint="--env")
    return getattr(module, job)


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


class FamilyOptions:
    """Mixin of the requests of the generic commands (eval, listen, render): ``family_options``
    holds the family-specific options that were set (unset ones are absent), ``--option`` pairs
    included; the family takes those it knows and refuses the rest."""

    env: str
    family_options: dict[str, Any]

    def take(self, name: str, default: Any = None) -> Any:
        """A family option, removed from what is left to check."""
        return self.family_options.pop(name, default)

    def refuse_the_rest(self) -> None:
        if self.family_options:
            raise typer.BadParameter(f"{self.env} takes no option(s) {sorted(self.family_options)}")


def family_options(pairs: list[str] | None, **flags: Any) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs (values listed per key) plus the family flags that were set."""
    options: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        options.setdefault(key, []).append(value)
    options.update({k: v for k, v in flags.items() if v is not None})
    return options


def option_value(text: str, key: str) -> Any:
    """A ``--option`` value as JSON when it parses (0.05, 3, true, null), else the plain string.
    NaN and infinities are refused: a run's configuration is written as strict JSON."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if isinstance(value, float) and not math.isfinite(value):
        raise typer.BadParameter(f"{key}={text}: {key} must be a finite number", param_hint="--option")
    return value


def split_item_ids(env: str, split: str, limit: int | None = None) -> tuple[str, ...]:
    """The first ``limit`` episode ids of one of the env's splits (or of ``all``)."""
    env_family = family(env)
    if split not in (*env_family.splits, "all"):
        raise typer.BadParameter(
            f"split must be one of {', '.join(env_family.splits)} or all", param_hint="--split"
        )
    return env_family.item_ids(split)[:limit]


def available_agents(env_family: EnvFamily) -> dict[str, object]:
    """Agent factories registered for a family: entry points of its ``agent_group``, plus those
    still registered under one of its ``legacy_agent_groups`` (with a DeprecationWarning)."""
    found = {ep.name: ep for ep in entry_points(group=env_family.agent_group)}
    for group in env_family.legacy_agent_groups:
        legacy = {ep.name: ep for ep in entry_points(group=group) if ep.name not in found}
        if legacy:
            warnings.warn(
                f"agents {sorted(legacy)} are registered under the entry-point group {group!r}, "
                f"which is read for one more release; register them under {env_family.agent_group!r}",
                DeprecationWarning,
                stacklevel=2,
            )
            found.update(legacy)
    return found


def agent_spec(spec: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME:CHECKPOINT`` (an agent that plays a saved model, e.g. ``ppo:runs/p/final``)."""
    name, sep, checkpoint = spec.partition(":")
    if sep and not checkpoint:
        raise typer.BadParameter(f"{spec!r}: write NAME:CHECKPOINT with a path", param_hint="--cell")
    return name, checkpoint or None


def agent_factory(entry_point, llm_client: str | None, checkpoint: str | None = None):
    """The entry point's picklable factory. Agents built around a chat model get one from
    ``llm_client``; agents that play a saved model (``from_checkpoint``) load ``checkpoint``."""
    factory = entry_point.load()
    if hasattr(factory, "from_checkpoint"):
        if checkpoint is None:
            raise typer.BadParameter(
                f"agent {entry_point.name!r} plays a checkpoint: write {entry_point.name}:PATH",
                param_hint="--cell",
            )
        if not Path(checkpoint).exists():
            raise typer.BadParameter(f"no checkpoint at {checkpoint}", param_hint="--cell")
        return functools.partial(factory.from_checkpoint, Path(checkpoint))
    if checkpoint is not None:
        raise typer.BadParameter(f"agent {entry_point.name!r} takes no checkpoint", param_hint="--cell")
    if not getattr(factory, "needs_client", False):
        return factory
    if llm_client is None:
        raise typer.BadParameter(
            f"agent {entry_point.name!r} needs --llm-client "
            "(hf:<model>, hf-audio:<model> or openai:<url>@<model>)"
        )
    try:
        return factory.from_client_spec(llm_client)
    except (ValueError, RuntimeError, ImportError) as exc:  # a bad spec; no model or extra here; no server
        raise typer.BadParameter(str(exc), param_hint="--llm-client") from None


def client_spec(spec: str | None, dtype: str | None = None, trust_remote_code: bool = False) -> str | None:
    """``--llm-client`` with ``--dtype`` and ``--trust-remote-code`` as the ``?key=value`` options
    of a local model's spec (a server's model is loaded by the server); options the spec names
    already are kept."""
    if spec is None or not spec.startswith(LOCAL_CLIENTS):
        return spec
    named = {pair.partition("=")[0] for pair in spec.partition("?")[2].split("&") if pair}
    wanted = {"dtype": dtype, "trust_remote_code": "true" if trust_remote_code else None}
    extra = [f"{k}={v}" for k, v in wanted.items() if v is not None and k not in named]
    if not extra:
        return spec
    return f"{spec}{'&' if '?' in spec else '?'}{'&'.join(extra)}"


def component(name: str):
    """A trainer or plug-in registered under ``hear_gym.components`` (by the agents package)."""
    found = {ep.name: ep for ep in entry_points(group=COMPONENT_GROUP)}
    extra = "train" if name.startswith("train_") else "agents"  # trainers need TRL and peft too
    if name not in found:
        fail(f"{name!r} needs the agents package: pip install 'hear-gym[{extra}]'")
    try:
        return found[name].load()
    except ImportError as exc:
        fail(f"{name!r} needs hear-gym[{extra}]: pip install 'hear-gym[{extra}]' ({exc})")


def registered_cells(
    env_family: EnvFamily, specs, default_access: str, llm_client: str | None
) -> tuple[list[Cell], dict[str, Any]]:
    """The cells ``specs`` name (``agent@ACCESS``; ``agent`` may be ``NAME:CHECKPOINT``) and a
    factory per agent, from the family's registered agents; a bad spec or an unknown agent is a
    ``--cell`` error."""
    registered = available_agents(env_family)
    cells, factories = [], {}
    for spec in specs:
        try:
            cell = Cell.from_spec(spec, default_access=default_access)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--cell") from None
        name, checkpoint = agent_spec(cell.agent)
        if name not in registered:
            raise typer.BadParameter(
                f"unknown agent {name!r}; agents: {sorted(registered)}", param_hint="--cell"
            )
        factories[cell.agent] = agent_factory(registered[name], llm_client, checkpoint)
        cells.append(cell)
    return cells, factories
