"""OpenEnv's pydantic Action / Observation / State models for one served env, generated from its
field codecs (server: from the env's spaces; client: from the hints in the server's ``/schema``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, WithJsonSchema, create_model, field_validator

from hear_gym.integrations.openenv.codec import FieldCodec

HINT_KEY = "x-hear-gym"  # where a field's codec hint sits in its JSON schema


class ServedObservation(Observation):
    """OpenEnv's observation; its ``metadata`` holds ``terminated``, ``truncated`` and the env's
    ``info`` (as JSON)."""


class ServedState(State):
    """OpenEnv's state (``episode_id``, ``step_count``) plus the env id, the ``gym.make`` kwargs,
    the seed of the session's last seeded reset and the id of the server process that holds the
    session (one of several with ``hear-gym serve --workers N``)."""

    env_id: str = ""
    make_kwargs: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    worker_pid: int | None = None


# base64 text on the wire; the bytes of its binary frame once a client has read that (``frames``)
_AUDIO = Annotated[str | bytes, WithJsonSchema({"type": "string"})]


def _schema_extra(codec: FieldCodec) -> dict[str, Any]:
    return {HINT_KEY: codec.hint}


def _observation_field(codec: FieldCodec) -> tuple[Any, Any]:
    kind_type = {"text": str, "discrete": int, "audio": _AUDIO, "array": list}[codec.kind]
    description = {
        "text": "text, as the env gives it",
        "discrete": "an integer",
        "audio": f"the valid samples, {codec.encoding} little-endian, 16 kHz mono: base64, or the "
        "mark of the binary frame that follows (clients that ask for binary frames)",
        "array": f"{codec.dtype} values, shape {list(codec.shape)}, as nested lists",
    }[codec.kind]
    return kind_type, Field(..., description=description, json_schema_extra=_schema_extra(codec))


def _action_field(codec: FieldCodec) -> tuple[Any, Any]:
    extra = _schema_extra(codec)
    if codec.kind == "discrete":
        return int, Field(..., ge=codec.low, le=codec.high, strict=True, json_schema_extra=extra)
    return str, Field(
        ..., min_length=codec.min_length, max_length=codec.max_length, strict=True, json_schema_extra=extra
    )


def _escaped(value: Any) -> Any:
    """A string with the characters UTF-8 cannot carry (lone surrogates, as JSON's ``"\\ud800"``
    decodes) written as ``\\uXXXX`` escapes: pydantic refuses such a string, quoting it, and an
    answer quoting one cannot be serialized (the WebSocket session would end). A text action so
    escaped reaches the env as a reply like any other (a malformed one, under the family's rule)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


@dataclass(frozen=True)
class ServedModels:
    observation_codecs: tuple[FieldCodec, ...]
    action_codec: FieldCodec
    action: type[Action]
    observation: type[ServedObservation]


def build_models(
    name: str, observation_codecs: tuple[FieldCodec, ...], action_codec: FieldCodec
) -> ServedModels:
    """The Action and Observation classes of one served env (``name`` prefixes their class names)."""
    action = create_model(
        f"{name}Action",
        __base__=Action,
        __validators__={"escaped": field_validator("action", mode="before")(_escaped)},
        action=_action_field(action_codec),
    )
    observation = create_model(
        f"{name}Observation",
        __base__=ServedObservation,
        **{codec.name: _observation_field(codec) for codec in observation_codecs},
    )
    return ServedModels(observation_codecs, action_codec, action, observation)


def models_from_schema(schema: dict[str, Any]) -> ServedModels:
    """The models a server built, rebuilt from its ``/schema`` answer (the hints of its fields)."""

    def hints(part: str) -> list[FieldCodec]:
        properties = schema[part].get("properties", {})
        return [FieldCodec.from_hint(p[HINT_KEY]) for p in properties.values() if HINT_KEY in p]

    (action,) = hints("action") or (None,)
    if action is None:
        raise ValueError("the server's /schema has no hear_gym action: is it a hear-gym serve server?")
    title = schema["observation"].get("title", "ServedObservation")
    return build_models(title.removesuffix("Observation"), tuple(hints("observation")), action)
