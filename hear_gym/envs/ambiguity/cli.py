"""Ambiguity's part of ``hear-gym eval|listen --env hear_gym/Ambiguity-v0`` (``plan_eval``,
``listen``). Rendering is lazy and cached in-process (a reading takes a fraction of a second), so
there is no ``render`` command to fill a disk cache."""

from __future__ import annotations

import json
from typing import Any

import typer

from hear_gym.cli.audio import ListenRequest
from hear_gym.cli.common import registered_cells
from hear_gym.cli.evaluate import EvalRequest
from hear_gym.core.run_config import RunConfig
from hear_gym.core.run_folder import write_text_atomic, write_wav_atomic
from hear_gym.envs.ambiguity.family import ENV_ID, FAMILY
from hear_gym.envs.ambiguity.items.generator import episodes_by_id
from hear_gym.envs.ambiguity.items.model import LANGUAGES, Phenomenon

DEFAULT_CELLS = ("random@T-nopunct", "text_only@T-nopunct")
PHENOMENA = tuple(p.value for p in Phenomenon)


def _chosen(request, key: str, allowed: tuple[str, ...]) -> set[str]:
    values = request.take(key, list(allowed))
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise typer.BadParameter(f"unknown {key} {unknown}; one of {allowed}", param_hint=f"--option {key}=")
    return set(values)


def plan_eval(request: EvalRequest) -> tuple[Any, dict, dict]:
    """(RunConfig, agent factories, env objects) of a ``hear-gym eval`` request. Cells are
    ``agent@ACCESS`` (agents of ``hear_gym.agents.ambiguity``; access T, T-nopunct, A+T or A;
    default T-nopunct). Own options: ``phenomenon`` and ``language`` (repeatable; default all)."""
    phenomena = _chosen(request, "phenomenon", PHENOMENA)
    languages = _chosen(request, "language", LANGUAGES)
    request.refuse_the_rest()
    cells, factories = registered_cells(
        FAMILY, request.cells or DEFAULT_CELLS, "T-nopunct", request.llm_client
    )
    by_id = episodes_by_id()
    chosen = [
        e
        for e in FAMILY.item_ids(request.split)
        if by_id[e].phenomenon.value in phenomena and by_id[e].language in languages
    ]
    episodes = tuple(chosen[: request.limit])  # --limit counts the chosen phenomena and languages
    try:
        config = RunConfig(
            ENV_ID, tuple(cells), episodes, seed=request.seed, env_kwargs=(("renderer", request.renderer),)
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return config, factories, {}


def listen(request: ListenRequest) -> str:
    """``hear-gym listen ITEM_ID --env hear_gym/Ambiguity-v0``: every user turn of the episode
    as a 16 kHz PCM_16 WAV (a minimal pair's id without ``/a`` or ``/b`` writes both readings),
    with a JSON sidecar (what was written, how it was said, the question and its gold)."""
    from hear_gym.envs.ambiguity.env import AmbiguityEnv

    request.refuse_the_rest()
    by_id = episodes_by_id()
    wanted = request.item_id or ""
    item_ids = [wanted] if wanted in by_id else [e for e in (f"{wanted}/a", f"{wanted}/b") if e in by_id]
    if not item_ids:
        raise typer.BadParameter(
            "give an episode id, e.g. phonological-en-pause-test-000/a or multi_turn-zh-test-003",
            param_hint="ITEM_ID",
        )
    env = AmbiguityEnv(item_ids=item_ids, renderer=request.renderer)
    out = request.out / wanted.replace("/", "_")
    out.mkdir(parents=True, exist_ok=True)
    sidecar = []
    for episode_id in item_ids:
        episode = by_id[episode_id]
        env.reset(options={"item_id": episode_id})
        for k, turn in enumerate(episode.turns):
            name = f"{episode_id.replace('/', '_')}_turn{k + 1}.wav"
            write_wav_atomic(out / name, env.turn_audio()[0], 16_000)
            sidecar.append(
                {
                    "file": name,
                    "written": [u.written for u in turn.said],
                    "spoken": [None if u.spoken is None else u.spoken.__dict__ for u in turn.said],
                    "options": list(turn.asked.options),
                    "answer": turn.asked.answer,
                }
            )
            env.step(turn.asked.answer)
    write_text_atomic(out / "episode.json", json.dumps(sidecar, ensure_ascii=False, indent=2))
    return f"wrote {len(sidecar)} turns of {', '.join(item_ids)} to {out}"


sub_app = typer.Typer(help="Ambiguity: same words, different prosody or context.", no_args_is_help=True)


@sub_app.command("counts")
def counts_command() -> None:
    """Instances per split and phenomenon-language cell (the test split has C3's Table 1 counts)."""
    from hear_gym.cli.common import console
    from hear_gym.envs.ambiguity.items.generator import split_counts

    console.print_json(json.dumps(split_counts()))


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="ambiguity")
