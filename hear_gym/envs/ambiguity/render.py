"""Audio for the Ambiguity family: a ``SpokenReading`` (one interpretation of a minimal pair) or a
plain turn, 16 kHz mono float32, deterministic and cached.

One eSpeak NG synthesis per reading gives the words and, from eSpeak's word events, where each
token starts. What eSpeak controls itself is left to it: heteronym pronunciations (phoneme input
``[[...]]``), Mandarin syllables with a forced tone (tone-numbered pinyin in the text). The rest
is drawn by Praat overlap-add resynthesis (``acoustic_edit.py``), because eSpeak has no
deterministic plain-text control for it or its own is too weak (measured in
``benchmarks/ambiguity/cues.py``): contrastive stress (an F0 accent, longer duration, more gain
on the token), Mandarin tones (eSpeak's tone movements span 0.5-2 semitones; the forced syllable
gets its Chao contour over 10 semitones), and durations. Pauses are silence inserted at the
token boundary.

Two realizations (``renderer=``), for robustness across renderers:

* ``espeak``: eSpeak's own phrasing and intonation: a comma at each pause boundary (its
  pre-boundary lengthening and continuation contour), the final rise or fall from the final
  punctuation ("?" / "."), reinforced by a drawn 3 semitones (eSpeak's own "?" measured as a
  final fall on 2 of 17 suite sentences x 3 voices); Praat for stress, tones and timing.
* ``praat``: level neutral eSpeak speech; Praat draws the final contour, pre-boundary
  lengthening, a larger accent with post-focus compression, tones and timing.

Stress is heard at its word only: a stress reading's F0 baseline is levelled (eSpeak's
declination would give an early accent a higher peak than a late one), the accent is drawn to one
height above the utterance's median over the first ``ACCENT_S`` of its word, and the final
movement starts after where an accent on the last word would end, whichever word is stressed:
no global F0 statistic tells which word it was (``agents/ambiguity/stress_shortcuts.py``).

Length is not a cue: every reading of a text lasts the same (the text's plain duration plus one
pause's worth): a reading with one pause spends it on the silence, one without on slower speech,
one with two pauses speaks faster; stress lengthening is taken from the other tokens.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass
from types import MappingProxyType

import numpy as np

from hear_gym.envs.ambiguity import acoustic_edit as edit
from hear_gym.envs.ambiguity.spoken import SpokenReading
from hear_gym.speech import espeak
from hear_gym.speech.cache import RenderCache, shared_render_cache
from hear_gym.speech.renderers import _PRAAT_LOCK as PRAAT_LOCK  # Praat's random generator is global
from hear_gym.speech.renderers import REFERENCE_SCALE, Rendering, RenderRequest, resample_to_16k

SAMPLE_RATE = 16_000
ESPEAK_LANGUAGE = MappingProxyType({"en": "en", "zh": "cmn"})
READING_DELIVERY = "ambiguity-reading"
NEUTRAL_SETTINGS = espeak.EspeakSettings(rate=165, pitch=50, range=50, volume=60)
PAUSE_S = 0.35  # silence inserted at each pause boundary
# every reading lasts its text's plain duration plus this: one pause spends it on silence, none on
# slower speech, two on silence and faster speech
LENGTH_BUDGET_S = PAUSE_S
EDGE_S = 0.1  # silence before and after the speech
SILENCE = 64  # |int16| at or below this is silence (eSpeak's output at volume 60)
# Chao tone letters (1 low .. 5 high) of each tone; tone 3 dips only utterance-finally
TONE_LETTERS = MappingProxyType({1: "55", 2: "35", 3: "21", 4: "51", 5: "33"})
FINAL_TONE3 = "2114"
MANDARIN_FINAL_REGISTER = 0.15  # share of the drawn final movement a Mandarin ending shifts by
MIN_FINAL_S = 0.1  # the shortest final movement
ACCENT_S = 0.22  # how long an F0 accent lasts (from its token's start; shorter tokens: all of it)
LEVELLED_KEPT = 0.5  # share of its local F0 movement a levelled (stress) reading keeps
_PUNCT = ".,;:!?\u3002\uff0c\uff1f\uff01\u3001\"'"


@dataclass(frozen=True)
class Realization:
    """How one renderer realizes the prosodic fields (amounts in semitones, factors, dB)."""

    name: str
    version: str
    native_phrasing: bool  # eSpeak's comma at pauses and final punctuation for the contour
    accent_st: float  # peak F0 raise on a stressed token
    stress_duration: float
    stress_gain_db: float
    pre_boundary_lengthening: float  # duration factor of a token before a pause (praat only)
    final_st: float  # drawn final rise / fall (semitones; on top of eSpeak's when native)
    final_window_s: float
    tone_step_st: float  # semitones per Chao level


REALIZATIONS: MappingProxyType[str, Realization] = MappingProxyType(
    {
        "espeak": Realization("espeak", "3", True, 4.0, 1.3, 4.0, 1.0, 3.0, 0.4, 2.5),
        "praat": Realization("praat", "3", False, 6.0, 1.4, 3.0, 1.25, 7.0, 0.35, 2.5),
    }
)


def tone_of(form: str) -> int:
    """The tone number of a tone-numbered pinyin syllable ('mai3' -> 3)."""
    return int(form[-1])


# -- the text eSpeak reads --------------------------------------------------------------------
@dataclass(frozen=True)
class Script:
    text: str  # what eSpeak reads
    spans: tuple[tuple[int, int], ...]  # per token: 1-based first and last character in ``text``


def script(reading: SpokenReading, native_phrasing: bool) -> Script:
    """Tokens with their pronunciation overrides, a comma after pause tokens when eSpeak phrases,
    and the final mark (the contour's when eSpeak draws it, else a level comma)."""
    overrides = dict(reading.pronounce)
    zh = reading.language == "zh"
    comma, marks = (
        ("\uff0c", {"fall": "\u3002", "rise": "\uff1f"}) if zh else (",", {"fall": ".", "rise": "?"})
    )
    text, spans = "", []
    for i, token in enumerate(reading.tokens):
        spoken = token.strip(_PUNCT) or token
        if i in overrides:
            spoken = overrides[i] if zh else f"[[{overrides[i]}]]"
        if text:
            text += " "
        spans.append((len(text) + 1, len(text) + len(spoken)))
        text += spoken
        if native_phrasing and i in reading.pause_after:
            text += comma
    text += marks[reading.contour] if native_phrasing else comma
    return Script(text, tuple(spans))


def token_starts(
    spans: tuple[tuple[int, int], ...], words: list[tuple[int, int]], n_samples: int
) -> list[int]:
    """Sample where each token starts: the first eSpeak word event inside its characters; a token
    eSpeak gave no event (merged into a neighbour) starts halfway between its neighbours."""
    starts: list[int | None] = []
    for first, last in spans:
        hits = [sample for position, sample in words if first <= position <= last]
        starts.append(min(hits) if hits else None)
    known = [(i, s) for i, s in enumerate(starts) if s is not None]
    if not known:
        raise espeak.EspeakError("eSpeak reported no word positions")
    filled = np.interp(range(len(starts)), [i for i, _ in known], [s for _, s in known])
    bounded = np.maximum.accumulate(np.clip(filled, 0, n_samples))
    return [int(round(s)) for s in bounded]


def _loud(samples: np.ndarray) -> np.ndarray:
    return np.abs(samples.astype(np.int32)) > SILENCE


def speech_bounds(samples: np.ndarray) -> tuple[int, int]:
    loud = np.flatnonzero(_loud(samples))
    if not len(loud):
        raise espeak.EspeakError("eSpeak returned silence")
    return int(loud[0]), int(loud[-1]) + 1


def gap_before(samples: np.ndarray, start: int) -> int:
    """First sample of the silence that ends at ``start`` (``start`` itself when there is none)."""
    loud = np.flatnonzero(_loud(samples[:start]))
    return int(loud[-1]) + 1 if len(loud) else start


# -- rendering --------------------------------------------------------------------------------
class ReadingRenderer:
    """A speech-layer ``Renderer`` for readings: the request's text is the reading as JSON (so the
    speech layer's render cache keys on every field) and its delivery is ``READING_DELIVERY``."""

    def __init__(self, realization: Realization) -> None:
        self.realization = realization
        self.name = f"ambiguity-{realization.name}"
        self.version = realization.version

    def describe(self, request: RenderRequest) -> dict:
        reading = decode(request.text)
        return {
            "renderer": self.name,
            "realization": asdict(self.realization),
            "spoken_text": script(reading, self.realization.native_phrasing).text,
            "reading": asdict(reading),
        }

    def render(self, request: RenderRequest) -> Rendering:
        reading = decode(request.text)
        waveform, spans = _render(reading, request.voice, self.realization)
        # token times are known only to a fresh rendering (a disk hit has just the samples)
        return Rendering(waveform, SAMPLE_RATE, {**self.describe(request), "token_spans_s": spans})


def _render(
    reading: SpokenReading, voice: str, how: Realization
) -> tuple[np.ndarray, tuple[tuple[float, float], ...]]:
    """The waveform and each token's (start, end) in it, in seconds."""
    language = ESPEAK_LANGUAGE[reading.language]
    plan = script(reading, how.native_phrasing)
    samples, words = espeak.synthesize_words(plan.text, voice, language, NEUTRAL_SETTINGS)
    # Praat's noise is seeded by what eSpeak said, not by how the text is spelled: two spellings
    # eSpeak says alike (a heterograph pair) sound alike
    marks = f"{reading.pause_after}{reading.stress}{reading.contour}".encode()
    digest = hashlib.blake2b(samples.tobytes() + marks, digest_size=4).digest()
    seed = int.from_bytes(digest, "little") & 0x7FFFFFFF
    head, tail = speech_bounds(samples)
    starts = [min(max(s, head), tail) for s in token_starts(plan.spans, words, len(samples))]
    bounds = [*starts[1:], tail]  # token i spans [starts[i], bounds[i])
    rate = espeak.ESPEAK_RATE
    gaps = [(gap_before(samples, starts[i + 1]), starts[i + 1]) for i in reading.pause_after]

    # every reading of this text lasts as long as its plain synthesis plus LENGTH_BUDGET_S
    plain = SpokenReading(reading.text, reading.language, pronounce=reading.pronounce)
    plain_head, plain_tail = speech_bounds(
        espeak.synthesize(script(plain, True).text, voice, language, NEUTRAL_SETTINGS)
    )
    target_s = (plain_tail - plain_head) / rate + LENGTH_BUDGET_S

    ends = [max(start + 1, gap_before(samples, bound)) for start, bound in zip(starts, bounds, strict=True)]
    spans = [edit.DurationSpan(starts[i] / rate, ends[i] / rate, how.stress_duration) for i in reading.stress]
    spans += [
        edit.DurationSpan(starts[i] / rate, ends[i] / rate, how.pre_boundary_lengthening)
        for i in reading.pause_after
        if i not in reading.stress and how.pre_boundary_lengthening != 1.0
    ]
    kept_s = (tail - head - sum(b - a for a, b in gaps)) / rate
    stretched_s = sum((s.end - s.start) * (s.factor - 1) for s in spans)
    base = (target_s - PAUSE_S * len(gaps)) / (kept_s + stretched_s)
    spans = [edit.DurationSpan(s.start, s.end, s.factor * base) for s in spans]

    reference = edit.median_f0_st(samples[head:tail] * REFERENCE_SCALE, rate)
    f0_edits = _f0_edits(reading, how, starts, bounds, tail, reference)
    with PRAAT_LOCK:
        from parselmouth.praat import run

        run(f"random_initializeWithSeedUnsafelyButPredictably ({seed})")
        try:
            shaped = edit.resynthesize(samples * REFERENCE_SCALE, rate, f0_edits, spans, base)
        finally:
            run("random_initializeSafelyAndUnpredictably ()")

    where = edit.time_map(spans, base)

    def at(sample: int) -> int:  # where an original sample landed after resynthesis
        return int(round(where(sample / rate) * rate))

    for i in reading.stress:
        _apply_gain(shaped, at(starts[i]), at(ends[i]), how.stress_gain_db, rate)
    pause = int(round(PAUSE_S * rate))
    pieces, cursor, shifts = [], at(head), []  # shifts: (mapped sample, output offset from there on)
    for a, b in gaps:
        pieces += [shaped[cursor : at(a)], np.zeros(pause)]
        shifts.append((at(b), sum(map(len, pieces)) - at(b)))
        cursor = at(b)
    pieces.append(shaped[cursor : at(tail)])

    def seconds(sample: int, is_end: bool = False) -> float:  # output time of an original sample
        mapped = at(sample)
        offset = -at(head)
        for landed, shifted in shifts:  # in time order: the last gap before it counts
            if landed < mapped or (landed == mapped and not is_end):
                offset = shifted
        return EDGE_S + (mapped + offset) / rate

    speech = resample_to_16k(np.concatenate(pieces))
    edge = np.zeros(int(EDGE_S * SAMPLE_RATE))
    out = np.concatenate([edge, speech, edge]).astype(np.float32)
    token_spans = tuple((seconds(s), seconds(e, is_end=True)) for s, e in zip(starts, ends, strict=True))
    return np.clip(out, -1.0, 1.0, out=out), token_spans


def _f0_edits(
    reading: SpokenReading,
    how: Realization,
    starts: list[int],
    bounds: list[int],
    tail: int,
    reference: float,
) -> list[edit.F0Edit]:
    rate = espeak.ESPEAK_RATE
    edits = []
    if reading.language == "zh":
        last = len(reading.tokens) - 1
        for i, form in reading.pronounce:
            tone = tone_of(form)
            letters = FINAL_TONE3 if tone == 3 and i == last else TONE_LETTERS[tone]
            edits.append(
                edit.F0Edit(starts[i] / rate, bounds[i] / rate, _tone_contour(letters, reference, how))
            )
    # an accent spans the start of its token (where these words' stressed syllable is), as long
    # on every word: its share of the utterance's F0 does not depend on which word it is
    accents = [(starts[i] / rate, min(bounds[i], starts[i] + ACCENT_S * rate) / rate) for i in reading.stress]
    if reading.stress:
        # eSpeak's declination would make the accent's height depend on where the word is (an
        # early accent tops a higher baseline): the baseline is levelled first, so that where
        # the peak is, not a global F0 statistic, tells which word is stressed
        edits.append(edit.F0Edit(starts[0] / rate, tail / rate, _levelled(reference)))
    if how.final_st:
        end = tail / rate
        start = end - how.final_window_s
        if reading.language == "zh":  # the last syllable only: the one before keeps its tone
            start = max(start, starts[-1] / rate)
        if reading.stress:  # after where an accent on the last word would end, whichever is stressed
            start = min(max(start, starts[-1] / rate + ACCENT_S), end - MIN_FINAL_S)
        edits.append(
            edit.F0Edit(start, end, _final(end, end - start, reading.contour, how, reading.language))
        )
    for a, b in accents:  # drawn to the same height wherever the word is
        edits.append(edit.F0Edit(a, b, _accent(a, b, reference + how.accent_st)))
    return edits


def _tone_contour(letters: str, reference: float, how: Realization) -> edit.Contour:
    """The syllable's voiced stretch follows the Chao letters, linearly between them, around the
    utterance's median F0 (letter 3)."""
    levels = [reference + (int(c) - 3) * how.tone_step_st for c in letters]

    def contour(t: np.ndarray, st: np.ndarray) -> np.ndarray:
        u = (t - t[0]) / max(t[-1] - t[0], 1e-6)
        return np.interp(u, np.linspace(0, 1, len(levels)), levels)

    return contour


def _accent(a: float, b: float, peak_st: float) -> edit.Contour:
    """The token's contour pulled toward ``peak_st`` (absolute), fully at its middle."""

    def contour(t: np.ndarray, st: np.ndarray) -> np.ndarray:
        return st + (peak_st - st) * np.sin(np.pi * np.clip((t - a) / max(b - a, 1e-6), 0, 1))

    return contour


def _levelled(reference: float, kept: float = LEVELLED_KEPT) -> edit.Contour:
    """The contour without its linear trend, around ``reference``, with ``kept`` of its local
    movement."""

    def contour(t: np.ndarray, st: np.ndarray) -> np.ndarray:
        if len(t) < 3:
            return np.full_like(st, reference)
        trend = np.polyval(np.polyfit(t, st, 1), t)
        return reference + kept * (st - trend)

    return contour


def _final(end: float, window_s: float, contour: str, how: Realization, language: str) -> edit.Contour:
    size = how.final_st if contour == "rise" else -how.final_st
    if language == "zh":  # Mandarin keeps the last syllable's tone: the register moves, not the slope
        return lambda t, st: st + size * MANDARIN_FINAL_REGISTER
    return lambda t, st: st + size * np.clip(1 - (end - t) / window_s, 0, 1)


def _apply_gain(samples: np.ndarray, a: int, b: int, gain_db: float, rate: int) -> None:
    """``gain_db`` over [a, b) with 15 ms raised-cosine ramps (no clicks)."""
    ramp = int(0.015 * rate)
    envelope = np.ones(max(b - a, 0))
    if len(envelope) > 2 * ramp:
        rise = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, ramp))
        envelope[:ramp], envelope[-ramp:] = rise, rise[::-1]
    samples[a:b] *= 1 + (10 ** (gain_db / 20) - 1) * envelope


# -- public API -------------------------------------------------------------------------------
def encode(reading: SpokenReading) -> str:
    return json.dumps(asdict(reading), sort_keys=True, ensure_ascii=False)


def decode(text: str) -> SpokenReading:
    fields = json.loads(text)
    for key in ("pause_after", "stress"):
        fields[key] = tuple(fields[key])
    fields["pronounce"] = tuple((int(i), str(form)) for i, form in fields["pronounce"])
    return SpokenReading(**fields)


def check_renderer(renderer: str) -> str:
    """A renderer that can speak readings. The speech layer's neural voice cannot: readings need
    eSpeak's word positions (token times), its phoneme input (heteronyms) and Mandarin."""
    if renderer not in REALIZATIONS:
        why = (
            " (the neural voice has no word timing, phoneme input or Mandarin)"
            if renderer == "neural"
            else ""
        )
        raise ValueError(f"Ambiguity cannot render with {renderer!r}{why}; renderers: {sorted(REALIZATIONS)}")
    return renderer


_CACHES: dict[str, RenderCache] = {}
_CACHES_LOCK = threading.Lock()


def reading_cache(renderer: str) -> RenderCache:
    """This process's render cache for readings under ``renderer`` ('espeak' or 'praat')."""
    check_renderer(renderer)
    with _CACHES_LOCK:
        if renderer not in _CACHES:
            _CACHES[renderer] = RenderCache(ReadingRenderer(REALIZATIONS[renderer]), max_bytes=64 * 2**20)
        return _CACHES[renderer]


def render_reading(reading: SpokenReading, voice: str, renderer: str = "espeak") -> np.ndarray:
    """One interpretation of a minimal pair, spoken by ``voice``: 16 kHz mono float32 (read-only,
    shared by the cache)."""
    if not isinstance(reading, SpokenReading):
        raise TypeError(f"expected a SpokenReading, got {type(reading).__name__}")
    request = RenderRequest(encode(reading), READING_DELIVERY, voice, ESPEAK_LANGUAGE[reading.language])
    return reading_cache(renderer).render(request).waveform


def render_aligned(
    reading: SpokenReading, voice: str, renderer: str = "espeak"
) -> tuple[np.ndarray, tuple[tuple[float, float], ...]]:
    """Uncached rendering plus each token's (start, end) in seconds, for measuring cues (the
    speech of a token ends where its trailing silence starts)."""
    check_renderer(renderer)
    request = RenderRequest(encode(reading), READING_DELIVERY, voice, ESPEAK_LANGUAGE[reading.language])
    rendering = ReadingRenderer(REALIZATIONS[renderer]).render(request)
    return rendering.waveform, rendering.plan["token_spans_s"]


def render_text(text: str, language: str, voice: str, renderer: str = "espeak") -> np.ndarray:
    """A plain (non-phonological) turn in the speech layer's neutral delivery."""
    if language not in ESPEAK_LANGUAGE:
        raise ValueError(f"unknown language {language!r}; languages: {sorted(ESPEAK_LANGUAGE)}")
    request = RenderRequest(text, "neutral", voice, ESPEAK_LANGUAGE[language])
    return shared_render_cache(renderer).render(request).waveform
