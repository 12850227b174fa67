"""``hear-gym serve``: any registered env as an OpenEnv server (``hear_gym.integrations.openenv``)."""

from __future__ import annotations

from typing import Annotated

import typer

from hear_gym.cli.common import DEFAULT_ENV, EnvOption, FamilyOptionPairs, fail, family_options, option_value


def serve_command(
    env: EnvOption = DEFAULT_ENV,
    access: Annotated[str | None, typer.Option(help="Access condition (default: the family's own).")] = None,
    actions: Annotated[str, typer.Option(help="Action format: discrete or text.")] = "discrete",
    observation: Annotated[
        str, typer.Option(help="dict (text, mask, audio) or features (one vector per part).")
    ] = "dict",
    audio: Annotated[
        str, typer.Option(help="How audio travels: pcm16 (quantized) or float32 (exact).")
    ] = "pcm16",
    option: FamilyOptionPairs = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    max_concurrent_envs: Annotated[
        int, typer.Option(min=1, help="WebSocket sessions at once per worker, each with its own env.")
    ] = 1,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            help="Server processes behind the one address (one per core), each with its own "
            "sessions; a worker that dies is restarted, and the sessions it held are lost.",
        ),
    ] = 1,
    memory_limit: Annotated[
        float | None,
        typer.Option(
            min=1,
            help="MiB of resident memory per worker: at or above it a new session is refused "
            "(CAPACITY_REACHED) until sessions close.",
        ),
    ] = None,
    session_timeout: Annotated[
        float | None, typer.Option(min=0.001, help="Close a session idle this many seconds.")
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, help="Session k's first reset without a seed plays seed SEED+k.")
    ] = 0,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="HEAR_GYM_SERVE_TOKEN",
            show_envvar=True,
            help="Shared token every request must send as 'Authorization: Bearer TOKEN' (/health "
            "excepted). The server has no other authentication: bind it to localhost, or set a "
            "token and put TLS in front before exposing it.",
        ),
    ] = None,
) -> None:
    """Serve an env over OpenEnv's protocol (WebSocket /ws, /reset, /step, /state, /schema,
    /health) until interrupted; clients: hear_gym.integrations.openenv.HearGymClient or any
    OpenEnv client. Needs `pip install 'hear-gym[serve]'`. It binds to 127.0.0.1 and has no
    accounts: do not expose it as it is (--token for a shared secret)."""
    try:
        from hear_gym.integrations.openenv import ServedEnv, serve
    except ImportError as exc:
        fail(str(exc))
    make_kwargs = {key: option_value(values[-1], key) for key, values in family_options(option).items()} | {
        "actions": actions,
        "observation": observation,
    }
    if access is not None:
        make_kwargs["access"] = access
    try:
        served = ServedEnv(env, make_kwargs, audio=audio, base_seed=seed)
    except (ValueError, TypeError) as exc:
        fail(str(exc))
    if token is not None and not token:
        fail("--token must not be empty (leave it and HEAR_GYM_SERVE_TOKEN unset for no token)")
    try:
        serve(
            served,
            host=host,
            port=port,
            max_concurrent_envs=max_concurrent_envs,
            session_timeout=session_timeout,
            token=token,
            workers=workers,
            memory_limit_mb=memory_limit,
        )
    except ValueError as exc:  # make kwargs that workers cannot rebuild from JSON
        fail(str(exc))
