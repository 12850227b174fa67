"""Renderers: (text, delivery label, voice, language, plan table) -> 16 kHz mono float32 speech + plan.

Three mechanisms realize the same prosody plan (``plans.py``; the request names the plan table,
``prosody="paper"`` by default), for the paper's renderer-robustness condition:

* ``EspeakRenderer``: eSpeak NG's own controls. The text is synthesized with the plan's rate,
  pitch level (compensated for the level eSpeak's range adds) and pitch range; the final
  contour comes from the final punctuation (fall ".", rise "?", level ","); the audio is cut at
  eSpeak's clause ends, and the pauses between clauses are silence the renderer inserts; gain
  is digital.
* ``PraatRenderer``: neutral eSpeak speech re-shaped by Praat (overlap-add resynthesis through
  parselmouth): the F0 contour is shifted and its range scaled in semitones, durations are
  scaled to the plan's rate, the final contour is drawn into the pitch tier; same pauses, gain.
  Praat's overlap-add draws from Praat's process-wide random generator (unvoiced stretches), so
  the renderer seeds it from the request's hash for the call and re-randomizes it afterwards.
* ``NeuralRenderer``: a neural voice (Piper VITS, ``neural.py``; English; the optional extra
  ``hear-gym[neural]``): the plan's rate through Piper's length scale, one synthesis per phrase
  with the renderer's pauses, the voice id's speaker by a Praat formant and pitch shift, then
  the Praat transform above for pitch level, range and the final contour; same gain.

Other TTS systems plug in by implementing ``Renderer``. Rendering is deterministic: identical
requests give bit-identical waveforms (see ``hear_gym.speech.espeak`` for why that needed care,
and ``hear_gym.speech.resample``).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.speech import espeak, neural
from hear_gym.speech.plans import DEFAULT_PROSODY, ProsodyPlan, check_prosody, plan_for
from hear_gym.speech.resample import resample_pcm16, resample_to_16k

SAMPLE_RATE = AUDIO_RATE  # every renderer's output rate, the rate of the envs' audio leaves
ESPEAK_VOLUME = 60  # leaves headroom: clipping would engage eSpeak's stateful gain control
REFERENCE_SCALE = 1.0 / 32768  # int16 at ESPEAK_VOLUME -> neutral speech near -25 dBFS, no clipping
NEUTRAL = espeak.EspeakSettings(rate=175, pitch=50, range=50, volume=ESPEAK_VOLUME)
_CONTOUR_MARK = {
    "en": {"fall": ".", "rise": "?", "level": ","},
    "cmn": {"fall": "\u3002", "rise": "\uff1f", "level": "\uff0c"},
}
_TERMINAL = ".!?,;:\u3002\uff1f\uff01\uff0c"


@dataclass(frozen=True)
class RenderRequest:
    """What to say, how, by whom. ``prosody`` names the plan table; ``speaker`` is the person
    (e.g. a Hear2Act scenario's user), whose habitual prosody the ``paper`` table varies; it
    defaults to the voice, so two people sharing an eSpeak voice need their own ``speaker``."""

    text: str
    delivery: str
    voice: str
    language: str = "en"
    prosody: str = DEFAULT_PROSODY
    speaker: str = ""

    def __post_init__(self) -> None:
        check_prosody(self.prosody)
        if not self.text.strip():
            raise ValueError("cannot render empty text")
        if self.voice not in espeak.VARIANTS:
            raise ValueError(f"unknown voice {self.voice!r}; voices: {sorted(espeak.VARIANTS)}")
        if self.language not in espeak.LANGUAGES:
            raise ValueError(f"unknown language {self.language!r}; languages: {sorted(espeak.LANGUAGES)}")

    def speaker_key(self) -> str:
        return f"{self.prosody}|{self.language}|{self.voice}|{self.speaker or self.voice}"

    def variation_key(self) -> str:
        return f"{self.speaker_key()}|{self.delivery}|{self.text}"

    def plan(self) -> ProsodyPlan:
        return plan_for(self.delivery, self.prosody, self.speaker_key(), self.variation_key())


@dataclass(frozen=True)
class Rendering:
    waveform: np.ndarray  # float32, mono, SAMPLE_RATE
    sample_rate: int
    plan: dict  # what was realized: the prosody plan plus renderer-specific settings


class Renderer(Protocol):
    name: str
    version: str  # bump when output changes; part of every cache key

    def describe(self, request: RenderRequest) -> dict:
        """The plan record ``render`` reports for this request, without rendering."""
        ...

    def render(self, request: RenderRequest) -> Rendering: ...


def cache_key(renderer: Renderer, request: RenderRequest) -> str:
    """Content address of a rendering: renderer name and version plus every request field."""
    fields = (
        renderer.name,
        renderer.version,
        request.text,
        request.delivery,
        request.voice,
        request.language,
        request.prosody,
        request.speaker,
    )
    return hashlib.sha256("\x1f".join(fields).encode("utf-8")).hexdigest()


# -- shared steps -------------------------------------------------------------------------
def spoken_text(text: str, language: str, contour: str) -> str:
    """The text with its final punctuation set to the contour's mark (eSpeak's intonation
    follows the clause's punctuation: "." falls, "?" rises, "," stays level)."""
    body = text.strip().rstrip(_TERMINAL).rstrip()
    return (body or text.strip()) + _CONTOUR_MARK[language][contour]


def clauses(text: str, voice: str, language: str, settings: espeak.EspeakSettings) -> list[np.ndarray]:
    """Clause audio (int16, 22,050 Hz) from one eSpeak call, each trimmed of silence."""
    pieces = (trim_silence(c) for c in espeak.synthesize_clauses(text, voice, language, settings))
    return [p for p in pieces if len(p)]


def trim_silence(samples: np.ndarray, threshold: int = 64, block: int = 1024) -> np.ndarray:
    """Cut leading and trailing samples with |x| <= threshold. Scans in blocks from each end:
    clause pieces carry only short silences at their edges, so the middle is never touched."""

    def first_loud(x: np.ndarray) -> int | None:
        for start in range(0, len(x), block):
            chunk = x[start : start + block]
            loud = (chunk > threshold) | (chunk < -threshold)
            if loud.any():
                return start + int(loud.argmax())
        return None

    head = first_loud(samples)
    if head is None:
        return samples[:0]
    return samples[head : len(samples) - first_loud(samples[::-1])]


def assemble(pieces: list[np.ndarray], plan: ProsodyPlan, scale: float = REFERENCE_SCALE) -> np.ndarray:
    """Clauses (22,050 Hz: eSpeak's int16 PCM, or float samples) resampled one by one to 16 kHz,
    laid out after the lead pause with clause pauses between them, level and gain applied.
    Resampling only the speech keeps the pauses exact and spends no filtering on silence."""
    speech = [resample_pcm16(p) if p.dtype == np.int16 else resample_to_16k(p) for p in pieces]
    lead = int(round(SAMPLE_RATE * plan.lead_pause_ms / 1000))
    pause = int(round(SAMPLE_RATE * plan.clause_pause_ms / 1000))
    out = np.zeros(lead + sum(len(p) for p in speech) + pause * max(len(speech) - 1, 0), dtype=np.float32)
    position = lead
    for piece in speech:
        out[position : position + len(piece)] = piece
        position += len(piece) + pause
    out *= np.float32(scale * 10 ** (plan.gain_db / 20))
    return np.clip(out, -1.0, 1.0, out=out)


# -- eSpeak NG ----------------------------------------------------------------------------
class EspeakRenderer:
    name = "espeak"
    version = "6"  # 6: exact fixed-point resampling (hear_gym.speech.resample), last bits moved
    # eSpeak widens its range upward from the base pitch, so its F0 median rises by about 0.034 st
    # per range point (m1, m3, f2, f4; range 20-80); lowering the pitch parameter by this many
    # points per range point keeps a plan's pitch level and range independent, as Praat does.
    RANGE_PITCH_COMPENSATION = 0.18

    def settings(self, plan: ProsodyPlan) -> espeak.EspeakSettings:
        pitch = min(99.0, max(0.0, plan.pitch - self.RANGE_PITCH_COMPENSATION * (plan.range - 50)))
        return espeak.EspeakSettings(
            rate=int(round(plan.rate)),
            pitch=int(round(pitch)),
            range=int(round(plan.range)),
            volume=ESPEAK_VOLUME,
        )

    def describe(self, request: RenderRequest) -> dict:
        return self._record(request, request.plan())

    def _record(self, request: RenderRequest, plan: ProsodyPlan) -> dict:
        return {
            "renderer": self.name,
            "prosody": request.prosody,
            **plan.as_dict(),
            "espeak": asdict(self.settings(plan)),
            "spoken_text": spoken_text(request.text, request.language, plan.final_contour),
        }

    def render(self, request: RenderRequest) -> Rendering:
        plan = request.plan()  # hashes and draws: made once per rendering
        record = self._record(request, plan)
        pieces = clauses(record["spoken_text"], request.voice, request.language, self.settings(plan))
        return Rendering(assemble(pieces, plan), SAMPLE_RATE, record)


# -- Praat resynthesis --------------------------------------------------------------------
class PraatRenderer:
    """Neutral eSpeak speech, then F0 and duration manipulation in Praat (overlap-add)."""

    name = "praat"
    version = "4"
    # eSpeak's pitch parameter moves F0 by about 0.18 st per point (measured on m1 and f2, 30-70),
    # so a plan's pitch means the same in both renderers: 50 -> 0 st shift, 70 -> +3.6 st
    SEMITONES_PER_PITCH_POINT = 0.18
    CONTOUR_WINDOW_S = 0.3
    # a fall this deep gives the final slope eSpeak's "." does (about -11 st/s over the last
    # voiced 0.4 s, pooled over the shared acceptance phrases)
    CONTOUR_ST = {"rise": 5.0, "fall": -7.0}
    PITCH_RANGE_HZ = (50, 500)  # where the pitch analysis looks for F0

    def transform(self, plan: ProsodyPlan, voice: str = "m1") -> dict[str, float]:
        """The Praat delivery transform of ``plan``; ``voice`` is for renderers that shape each
        speaker here (the neural voice), and Praat's speakers are eSpeak's own."""
        return {
            "shift_st": (plan.pitch - 50) * self.SEMITONES_PER_PITCH_POINT,
            "range_factor": plan.range / 50,
            "duration_factor": NEUTRAL.rate / plan.rate,
        }

    def describe(self, request: RenderRequest) -> dict:
        plan = request.plan()
        return {
            "renderer": self.name,
            "prosody": request.prosody,
            **plan.as_dict(),
            **self.transform(plan, request.voice),
            # a level ending, so the final contour is Praat's alone
            "spoken_text": spoken_text(request.text, request.language, "level"),
        }

    def render(self, request: RenderRequest) -> Rendering:
        plan = request.plan()
        record = self.describe(request)
        neutral = clauses(record["spoken_text"], request.voice, request.language, NEUTRAL)
        pieces = self._reshape([x * REFERENCE_SCALE for x in neutral], self.transform(plan), request, plan)
        return Rendering(assemble(pieces, plan, scale=1.0), SAMPLE_RATE, record)

    def _reshape(
        self, pieces: list[np.ndarray], transform: dict, request: RenderRequest, plan: ProsodyPlan
    ) -> list[np.ndarray]:
        """Every clause through ``_manipulate`` (the final contour on the last), with Praat's
        random generator seeded from the request for the call."""
        seed = (
            int.from_bytes(
                hashlib.blake2b(request.variation_key().encode(), digest_size=4).digest(), "little"
            )
            & 0x7FFFFFFF
        )
        from parselmouth.praat import run

        with _PRAAT_LOCK:
            run(f"random_initializeWithSeedUnsafelyButPredictably ({seed})")
            try:
                return [
                    self._manipulate(x, transform, plan.final_contour if i == len(pieces) - 1 else None)
                    for i, x in enumerate(pieces)
                ]
            finally:
                run("random_initializeSafelyAndUnpredictably ()")

    def _manipulate(self, samples: np.ndarray, transform: dict, contour: str | None) -> np.ndarray:
        import parselmouth
        from parselmouth.praat import call

        if len(samples) < espeak.ESPEAK_RATE // 20:
            return samples
        sound = parselmouth.Sound(samples, sampling_frequency=espeak.ESPEAK_RATE)
        manipulation = call(sound, "To Manipulation", 0.01, *self.PITCH_RANGE_HZ)
        tier = call(manipulation, "Extract pitch tier")
        if call(tier, "Get number of points") > 0:
            # One Praat formula over all points, in semitones re 100 Hz: scale the range around
            # the mean, shift, then draw the final contour into the last CONTOUR_WINDOW_S.
            call(tier, "Formula", self._formula(tier, sound.xmax, transform, contour))
            call([manipulation, tier], "Replace pitch tier")
        durations = call("Create DurationTier", "rate", sound.xmin, sound.xmax)
        call(durations, "Add point", sound.xmin, transform["duration_factor"])
        call([manipulation, durations], "Replace duration tier")
        return call(manipulation, "Get resynthesis (overlap-add)").values[0].astype(np.float64)

    def _formula(self, tier, end: float, transform: dict, contour: str | None) -> str:
        from parselmouth.praat import call

        pivot = 12 * np.log2(call(tier, "Get mean (points)", 0, 0) / 100)
        k, shift = transform["range_factor"], transform["shift_st"]

        def shaped(st: str) -> str:
            return f"({pivot:.6f} + {k:.6f} * (({st}) - {pivot:.6f}) + {shift:.6f})"

        st = "12 * log2(self / 100)"
        start = end - self.CONTOUR_WINDOW_S
        if contour in self.CONTOUR_ST:
            ramp = f"max(0, min(1, (x - {start:.6f}) / {self.CONTOUR_WINDOW_S}))"
            target = f"{shaped(st)} + {self.CONTOUR_ST[contour]} * {ramp}"
        elif contour == "level":
            anchor = 12 * np.log2(call(tier, "Get value at time", start) / 100)
            target = f"if x > {start:.6f} then {shaped(f'{anchor:.6f}')} else {shaped(st)} fi"
        else:
            target = shaped(st)
        return f"100 * 2 ^ (({target}) / 12)"


# -- Piper neural voice -------------------------------------------------------------------
class NeuralRenderer(PraatRenderer):
    """Piper VITS speech (``neural.py``), English only: the plan's rate through Piper's length
    scale, one synthesis per phrase with the plan's pauses between them, the voice id's speaker
    (formant shift, pitch), then ``PraatRenderer``'s delivery transform (pitch level and range,
    the final contour drawn on a level ending) and gain."""

    name = "neural"
    version = "1"
    # Piper's float output times this puts neutral speech at eSpeak's level (-23 dBFS on five
    # short user turns in four voices); ``benchmarks/speed/neural_voice.py`` compares them on 48 turns
    # (neural about 1.5 dB below eSpeak), so a plan's gain means about the same
    LEVEL = 0.79
    # The voice's F0 lies within 60-150 Hz; with the 500 Hz ceiling, Praat read octave jumps
    # (200-450 Hz) in some frames and resynthesized them, squeaks included
    PITCH_RANGE_HZ = (60, 300)

    def __init__(self) -> None:
        neural.check_available()  # a missing extra fails here, naming it, not mid-episode

    def transform(self, plan: ProsodyPlan, voice: str = "m1") -> dict[str, float]:
        delivery = super().transform(plan)
        speaker = neural.NEURAL_SPEAKERS[voice]
        return {
            **delivery,
            "shift_st": delivery["shift_st"] + speaker.pitch_shift_st(),
            "duration_factor": 1.0,  # the rate is Piper's: phoneme durations, not stretched audio
            "length_scale": delivery["duration_factor"],
            "formant_ratio": speaker.formant_ratio,
        }

    def describe(self, request: RenderRequest) -> dict:
        if request.language != "en":
            raise ValueError(f'renderer="neural" speaks English only, not {request.language!r}')
        return super().describe(request)

    def render(self, request: RenderRequest) -> Rendering:
        plan = request.plan()
        record = self.describe(request)
        synthesized = neural.synthesize(record["spoken_text"], record["length_scale"])
        phrases = [p for p in (trim_silence(x * 32768) for x in synthesized) if len(p)]
        pieces = self._reshape([x * (self.LEVEL / 32768) for x in phrases], record, request, plan)
        return Rendering(assemble(pieces, plan, scale=1.0), SAMPLE_RATE, record)

    def _manipulate(self, samples: np.ndarray, transform: dict, contour: str | None) -> np.ndarray:
        shaped = neural.change_formants(samples, transform["formant_ratio"], self.PITCH_RANGE_HZ)
        return super()._manipulate(shaped, transform, contour)


_PRAAT_LOCK = threading.Lock()

RENDERERS: dict[str, type] = {"espeak": EspeakRenderer, "praat": PraatRenderer, "neural": NeuralRenderer}


def make_renderer(name: str) -> Renderer:
    try:
        return RENDERERS[name]()
    except KeyError:
        raise ValueError(f"unknown renderer {name!r}; renderers: {sorted(RENDERERS)}") from None
