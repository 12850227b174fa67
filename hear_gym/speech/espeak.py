"""In-process eSpeak NG, driven through ctypes from the ``espeakng-loader`` wheel.

Why repeated synthesis of the same text in one process was not bit-identical (while a fresh
process was): state inside libespeak-ng outlives an utterance, and the next one starts from it.
Found by synthesizing the same text after random histories (other texts, voices, settings):

* Pitch *flutter*: ``wavegen.c`` keeps a static index into its flutter table that advances with
  every pitch period and is never reset, so each utterance starts at another flutter phase
  (slightly different F0, hence even a different length).
* *Roughness*: amplitude modulation every n pitch periods, keyed to a static cycle counter, so
  the modulation phase depends on how many periods earlier utterances had (outputs differed by
  up to 25% in amplitude, in two alternating versions).
* *Breath* noise (female variants): drawn from a generator whose state carries over.
* SSML: with ``espeakSSML`` the prosody of a ``<speak>`` element depends on earlier calls.

None of this can be reset through the API (re-initializing does not reset these statics; only
unloading the library does, at twice the cost of a synthesis). So hear_gym synthesizes plain
text only (pauses are inserted by the renderer) and only with its own voice variants, derived
from eSpeak's (same formants, pitch range, echo...) with ``flutter 0``, ``roughness 0`` and no
``breath``. They live in an overlay of the wheel's data folder (a copy of it plus the variants,
with a checksummed manifest), built once per user in the cache folder, verified once per
process and rebuilt when damaged; the installed package is never written to. With them, output depends on the
inputs only: identical in one process, whatever came before, and across processes
(``tests/speech/test_espeak.py``).

The engine holds global state and is not thread-safe: every call takes ``_LOCK``. Parallelism
comes from processes.

Interrupts. eSpeak hands each audio buffer to a Python callback called from C. An exception raised
there (a Ctrl-C is raised at the first Python instruction that runs, often the callback's first)
would be printed by ctypes as "Exception ignored" and dropped, and synthesis would go on without
that buffer: short audio, no error. So the callback never lets one reach C: it keeps it and stops
the synthesis (a non-zero return, per speak_lib.h), one raised before its body runs is taken from
``sys.unraisablehook``, and ``synthesize`` raises it once eSpeak has returned. Audio is returned
only when eSpeak's end-of-data callback came; the engine is ready for the next call either way.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import espeakng_loader
import numpy as np

from hear_gym.speech.cache_dir import cache_root

ESPEAK_RATE = 22_050
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_CHARS_UTF8 = 1
_PHONEME_INPUT = 0x100  # espeakPHONEMES: text inside [[...]] is read as eSpeak phonemes
_PARAMS = {"rate": 1, "volume": 2, "pitch": 3, "range": 4, "wordgap": 7}

# hear_gym voice id -> eSpeak variant it is derived from
VARIANTS: dict[str, str] = {
    "m1": "m1",
    "m2": "m2",
    "m3": "m3",
    "m4": "m4",
    "m7": "m7",
    "f1": "f1",
    "f2": "f2",
    "f3": "f3",
    "f4": "f4",
    "f5": "f5",
}
LANGUAGES = {"en": "en-us", "cmn": "cmn"}
VOICES: tuple[str, ...] = tuple(sorted(VARIANTS))  # hear_gym's deterministic voices
_VARIANT_PREFIX = "hg_"
_DROPPED = ("breath", "breathw", "flutter", "roughness")

_LOCK = threading.Lock()


class _Event(ctypes.Structure):
    """``espeak_EVENT`` from speak_lib.h (the union member read as its int)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_int64),
    ]


_EVENT_LIST_END = 0
_EVENT_WORD = 1  # espeakEVENT_WORD: a word starts (text_position: its 1-based character index)
_EVENT_CLAUSE_END = 5  # espeakEVENT_END: end of a sentence or clause
_CALLBACK_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event)
)


class EspeakError(RuntimeError):
    pass


@dataclass(frozen=True)
class EspeakSettings:
    """Engine parameters for one synthesis (eSpeak's own units)."""

    rate: int = 175  # words per minute
    pitch: int = 50  # 0-100
    range: int = 50  # 0-100
    volume: int = 100  # 0-200
    wordgap: int = 0  # units of 10 ms


def _variant_text(original: str, name: str) -> str:
    lines = [
        line
        for line in original.splitlines()
        if line.strip().split(" ", 1)[0] not in _DROPPED and not line.startswith("name ")
    ]
    return "\n".join([*lines, f"name {name}", "flutter 0", "roughness 0", ""])


def overlay_data_dir() -> Path:
    """The wheel's espeak-ng-data plus hear_gym's deterministic variants, as a private copy in the
    cache folder (built on first use, checked once per process, rebuilt if damaged)."""
    source = Path(espeakng_loader.get_data_path())
    variants_dir = source / "voices" / "!v"
    variants = {
        _VARIANT_PREFIX + voice: _variant_text(
            (variants_dir / variant).read_text(encoding="utf-8"), _VARIANT_PREFIX + voice
        )
        for voice, variant in sorted(VARIANTS.items())
    }
    # Named after the content we add and the wheel it overlays: a change to either builds anew.
    digest = hashlib.sha256(str(source.resolve()).encode())
    for name, text in variants.items():
        digest.update(f"{name}\n{text}".encode())
    target = cache_root() / f"espeak-ng-data-{digest.hexdigest()[:16]}"
    # Several processes may build at once (spawned workers on a fresh cache): a build lands by an
    # atomic rename, and a copy another process just landed is used rather than taken for damage.
    for _attempt in range(3):
        if target in _VERIFIED or _intact(target):
            _VERIFIED.add(target)
            return target
        _build_overlay(source, variants, target)
    raise EspeakError(f"could not build the eSpeak data overlay in {target}")


def _build_overlay(source: Path, variants: dict[str, str], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="espeak-overlay-", dir=target.parent))
    try:
        # Copies, not links: nothing written into the cache can reach the installed package.
        shutil.copytree(source, staging, dirs_exist_ok=True, symlinks=False)
        for name, text in variants.items():
            (staging / "voices" / "!v" / name).write_text(text, encoding="utf-8")
        files = sorted(p for p in staging.rglob("*") if p.is_file())
        manifest = {str(p.relative_to(staging)): _sha256(p) for p in files}
        (staging / _MANIFEST).write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
        if _intact(target):  # another process landed its copy while this one was building
            return
        if target.exists():  # damaged: move it aside first, so the rename below can land
            aside = target.with_name(f"{staging.name}-damaged")
            try:
                target.rename(aside)
            except OSError:  # another process moved or replaced it meanwhile
                return
            shutil.rmtree(aside, ignore_errors=True)
        try:
            os.rename(staging, target)
        except OSError:  # another process won the race; the caller checks its copy
            return
    finally:
        shutil.rmtree(staging, ignore_errors=True)


_MANIFEST = "hear_gym-manifest.json"
_VERIFIED: set[Path] = set()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _intact(folder: Path) -> bool:
    """Every file the manifest lists is a regular file with its recorded checksum, and no other
    file was added."""
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        present = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}
        if present != set(manifest) | {_MANIFEST}:
            return False
        return all(
            not (folder / rel).is_symlink() and _sha256(folder / rel) == digest
            for rel, digest in manifest.items()
        )
    except (OSError, ValueError, AttributeError, TypeError):  # unreadable or not our manifest
        return False


class _Engine:
    """The process-wide library handle. Use ``synthesize``; it serializes access."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        # 1 s buffers: fewer Python callbacks per utterance than the 200 ms default
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 1000, str(overlay_data_dir()).encode(), 0)
        if rate != ESPEAK_RATE:
            raise EspeakError(f"eSpeak NG failed to initialize (returned {rate})")
        self._start_utterance()
        self._owner, self._previous_hook = 0, sys.unraisablehook  # set by each synthesize call
        self._collector = self._collect  # the very object ctypes calls (and names when one escapes)
        self._callback = _CALLBACK_TYPE(self._collector)  # keep a reference: C holds the pointer
        lib.espeak_SetSynthCallback(self._callback)
        self._lib = lib

    def _start_utterance(self) -> None:
        self._chunks: list[np.ndarray] = []
        self._clause_ends_ms: list[int] = []
        self._word_starts: list[tuple[int, int]] = []  # (character index, ms)
        self._ended = False  # eSpeak's end-of-data callback came
        self._failure: BaseException | None = None  # what stopped the synthesis

    def _collect(self, wav, n_samples, events) -> int:
        """eSpeak's synthesis callback: 0 goes on, 1 stops the synthesis."""
        try:
            if self._failure is not None:
                return 1
            if not wav:  # a NULL buffer marks the end of the data
                self._ended = True
            elif n_samples > 0:
                self._chunks.append(np.ctypeslib.as_array(wav, shape=(n_samples,)).copy())
            i = 0
            while events and events[i].type != _EVENT_LIST_END:
                if events[i].type == _EVENT_CLAUSE_END:
                    self._clause_ends_ms.append(events[i].audio_position)
                elif events[i].type == _EVENT_WORD:
                    self._word_starts.append((events[i].text_position, events[i].audio_position))
                i += 1
            return 0
        except BaseException as exc:  # never into C, where ctypes would drop it (module docstring)
            self._failure = exc
            return 1

    def _keep_escaped(self, unraisable) -> None:
        """``sys.unraisablehook`` while synthesizing: keeps an exception that escaped the callback
        before its ``try`` (ctypes reports it here and carries on); passes on the rest."""
        escaped = unraisable.object is self._collector or (
            unraisable.object is None and "ctypes callback" in (unraisable.err_msg or "")
        )
        if escaped and threading.get_ident() == self._owner:
            self._failure = self._failure or unraisable.exc_value
        else:
            self._previous_hook(unraisable)

    def synthesize(
        self, text: str, voice: str, language: str, settings: EspeakSettings
    ) -> tuple[np.ndarray, list[int], list[tuple[int, int]]]:
        """(int16 samples, sample index of each clause end, (1-based character index, sample
        index) of each word start)."""
        if voice not in VARIANTS:
            raise ValueError(f"unknown voice {voice!r}; voices: {sorted(VARIANTS)}")
        if language not in LANGUAGES:
            raise ValueError(f"unknown language {language!r}; languages: {sorted(LANGUAGES)}")
        name = f"{LANGUAGES[language]}+{_VARIANT_PREFIX}{voice}".encode()
        data = text.encode("utf-8")
        with _LOCK:
            # Loading the voice before every utterance also clears the echo buffer; keeping an
            # already loaded voice lets the previous utterance's echo leak into this one.
            if self._lib.espeak_SetVoiceByName(name) != 0:
                raise EspeakError(f"eSpeak NG has no voice {name.decode()}")
            for key, param in _PARAMS.items():
                self._lib.espeak_SetParameter(param, int(getattr(settings, key)), 0)
            self._start_utterance()
            self._owner, self._previous_hook = threading.get_ident(), sys.unraisablehook
            sys.unraisablehook = self._keep_escaped
            try:
                flags = _CHARS_UTF8 | _PHONEME_INPUT
                err = self._lib.espeak_Synth(data, len(data) + 1, 0, 0, 0, flags, None, None)
                self._lib.espeak_Synchronize()
            finally:
                sys.unraisablehook = self._previous_hook
            chunks, ends, ended, failure = self._chunks, self._clause_ends_ms, self._ended, self._failure
            words = self._word_starts
            self._start_utterance()
        if failure is not None:
            raise failure
        if err != 0:
            raise EspeakError(f"espeak_Synth failed with code {err}")
        if not ended:
            raise EspeakError(f"eSpeak NG stopped before the end of {text[:40]!r}; no audio returned")
        samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return (
            samples,
            [_to_sample(ms, len(samples)) for ms in ends],
            [(position, _to_sample(ms, len(samples))) for position, ms in words],
        )


def _to_sample(ms: int, n_samples: int) -> int:
    return min(n_samples, ms * ESPEAK_RATE // 1000)


_ENGINE: _Engine | None = None


def synthesize(
    text: str, voice: str = "m1", language: str = "en", settings: EspeakSettings = EspeakSettings()
) -> np.ndarray:
    """Raw eSpeak output for plain text: int16 samples at 22,050 Hz."""
    return _engine().synthesize(text, voice, language, settings)[0]


def synthesize_words(
    text: str, voice: str = "m1", language: str = "en", settings: EspeakSettings = EspeakSettings()
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Raw eSpeak output (int16, 22,050 Hz) with eSpeak's word-start events: (1-based character
    index of the word in ``text``, sample index where its audio starts). ``[[...]]`` in the text
    is read as eSpeak phonemes (how a heteronym's pronunciation is forced)."""
    samples, _, words = _engine().synthesize(text, voice, language, settings)
    return samples, words


def synthesize_clauses(
    text: str,
    voice: str = "m1",
    language: str = "en",
    settings: EspeakSettings = EspeakSettings(),
    min_clause_ms: float = 120.0,
) -> list[np.ndarray]:
    """One synthesis, cut at eSpeak's clause-end events: int16 samples per clause (each still
    carrying eSpeak's own pause, for the caller to trim). The last event closes the text (what
    follows it, an echo tail, stays with the last clause), and a cut that would leave less than
    ``min_clause_ms`` on either side is not made."""
    samples, ends, _ = _engine().synthesize(text, voice, language, settings)
    shortest = int(ESPEAK_RATE * min_clause_ms / 1000)
    bounds = [0]
    for end in sorted(set(ends))[:-1]:
        if end - bounds[-1] >= shortest and len(samples) - end >= shortest:
            bounds.append(end)
    bounds.append(len(samples))
    return [samples[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _engine() -> _Engine:
    global _ENGINE
    with _LOCK:
        if _ENGINE is None:
            _ENGINE = _Engine()
    return _ENGINE
