"""How one observation or action field travels as JSON, read from the env's Gymnasium spaces.

A field's codec is described by a small JSON hint (``FieldCodec.hint``) that the server puts in
its ``/schema``; a client rebuilds the same codecs from the hints alone, so it decodes what any
served env sends without building the env itself. Numbers travel as JSON lists (float32 values
survive the round trip through JSON doubles exactly); the audio buffer travels up to its last
non-zero sample (the digital silence that pads a short input to the fixed-length buffer is
restored on arrival; a family that pads with room tone, as VoiceGate does, sends it all), as
16-bit PCM (half of float32's bytes, quantized) or as raw float32 (exact): a binary WebSocket
frame where the connection asked for them, base64 in the JSON otherwise (``frames``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from hear_gym.integrations.openenv.frames import audio_bytes, wire_audio

AUDIO_KEY = "audio"  # hear_gym.core.spaces.audio_spaces
AUDIO_ENCODINGS = ("pcm16", "float32")
PCM16_SCALE = 32767.0
# Observation names the OpenEnv base model already uses (a space key among them is refused).
RESERVED_NAMES = frozenset({"done", "reward", "metadata"})
SINGLE_FIELD = "observation"  # the field of an env whose observation space is not a Dict


@dataclass(frozen=True)
class FieldCodec:
    """One field: ``kind`` is text, discrete, array or audio; ``dtype`` and ``shape`` rebuild the
    NumPy value an env gives; ``encoding`` (audio only) is one of ``AUDIO_ENCODINGS``; ``low`` and
    ``high`` bound a discrete action (``start``, ``start + n - 1``); ``min_length``/``max_length``
    bound a text action."""

    name: str
    kind: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    encoding: str = ""
    low: int | None = None
    high: int | None = None
    min_length: int | None = None
    max_length: int | None = None

    @property
    def hint(self) -> dict[str, Any]:
        return {k: list(v) if k == "shape" else v for k, v in asdict(self).items() if v not in ("", None, ())}

    @classmethod
    def from_hint(cls, hint: dict[str, Any]) -> FieldCodec:
        return cls(**{**hint, "shape": tuple(hint.get("shape", ()))})

    def encode(self, value: Any) -> Any:
        """``value`` (as the env gave it) as JSON (audio: ``frames.wire_audio``)."""
        if self.kind in ("text", "discrete"):
            return value if self.kind == "text" else int(value)
        array = np.asarray(value)
        if self.kind == "array":
            return array.tolist()
        speech = array.reshape(-1)[: _sounding_end(array.reshape(-1))]  # trailing silence stays home
        if self.encoding == "pcm16":
            scaled = np.clip(speech, -1.0, 1.0)
            np.multiply(scaled, scaled.dtype.type(PCM16_SCALE), out=scaled)
            speech = np.rint(scaled, out=scaled).astype("<i2")
        else:
            speech = speech.astype("<f4", copy=False)
        return wire_audio(speech.tobytes())

    def decode(self, value: Any) -> Any:
        """The JSON ``value`` as the env gives it (audio, base64 text or the bytes of its binary
        frame, padded back to its full buffer)."""
        if self.kind in ("text", "discrete"):
            return value
        if self.kind == "array":
            return np.asarray(value, dtype=self.dtype).reshape(self.shape)
        raw = audio_bytes(value)
        audio = np.zeros(self.shape, dtype=self.dtype)
        flat = audio.reshape(-1)
        if self.encoding == "pcm16":
            samples = np.frombuffer(raw, dtype="<i2")
            # computed in float64 and rounded once to the buffer's dtype, written in place
            np.divide(samples, PCM16_SCALE, out=flat[: samples.size], casting="same_kind")
        else:
            samples = np.frombuffer(raw, dtype="<f4")
            flat[: samples.size] = samples
        return audio


def _sounding_end(samples: np.ndarray) -> int:
    """One past the last non-zero sample (0 when all are zero), scanning back from the end in
    growing blocks: a short utterance in a long buffer costs a pass over its silence only."""
    end, block = samples.size, 4096
    while end > 0:
        start = max(0, end - block)
        if samples[start:end].any():
            return start + int(np.flatnonzero(samples[start:end])[-1]) + 1
        end, block = start, block * 2
    return 0


def _field(name: str, space: spaces.Space, audio: str) -> FieldCodec:
    if isinstance(space, spaces.Text):
        return FieldCodec(name, "text")
    if isinstance(space, spaces.Discrete):
        return FieldCodec(name, "discrete", str(space.dtype))
    if isinstance(space, (spaces.Box, spaces.MultiBinary, spaces.MultiDiscrete)):
        kind = "audio" if name == AUDIO_KEY and np.issubdtype(space.dtype, np.floating) else "array"
        return FieldCodec(name, kind, str(space.dtype), tuple(space.shape), audio if kind == "audio" else "")
    raise TypeError(
        f"observation field {name!r}: {type(space).__name__} spaces cannot be served "
        "(Text, Discrete, Box, MultiBinary and MultiDiscrete can)"
    )


def observation_codecs(space: spaces.Space, audio: str = "pcm16") -> tuple[FieldCodec, ...]:
    """One codec per key of a Dict observation space (one field named ``observation`` for any
    other space); ``audio`` is how the audio buffer travels."""
    if audio not in AUDIO_ENCODINGS:
        raise ValueError(f"audio encoding must be one of {list(AUDIO_ENCODINGS)}, got {audio!r}")
    named = dict(space.spaces) if isinstance(space, spaces.Dict) else {SINGLE_FIELD: space}
    if clash := sorted(RESERVED_NAMES & set(named)):
        raise ValueError(f"observation keys {clash} clash with the names OpenEnv's models reserve")
    return tuple(_field(name, sub, audio) for name, sub in named.items())


def action_codec(space: spaces.Space) -> FieldCodec:
    """The one ``action`` field: an integer for a Discrete space, a string for a Text space."""
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return FieldCodec("action", "discrete", str(space.dtype), low=start, high=start + int(space.n) - 1)
    if isinstance(space, spaces.Text):
        return FieldCodec("action", "text", min_length=space.min_length, max_length=space.max_length)
    raise TypeError(f"{type(space).__name__} action spaces cannot be served (Discrete and Text can)")


def encode_observation(codecs: tuple[FieldCodec, ...], observation: Any) -> dict[str, Any]:
    named = observation if isinstance(observation, dict) else {SINGLE_FIELD: observation}
    return {c.name: c.encode(named[c.name]) for c in codecs}


def decode_observation(codecs: tuple[FieldCodec, ...], fields: dict[str, Any]) -> Any:
    decoded = {c.name: c.decode(fields[c.name]) for c in codecs}
    return decoded[SINGLE_FIELD] if list(decoded) == [SINGLE_FIELD] else decoded


def jsonable(value: Any) -> Any:
    """``info`` as plain JSON: NumPy scalars and arrays become numbers and lists; anything else
    that JSON cannot hold becomes its ``str`` (as ``results.jsonl`` writes records)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
