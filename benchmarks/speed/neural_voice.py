"""The neural renderer's cost, as a ratio measured in one run, and its two calibration constants.

* cold neural render (``NeuralRenderer``: Piper synthesis per phrase, speaker formant shift,
  Praat delivery transform, resampling) per second of audio it returns, over raw eSpeak
  synthesis (the same text, eSpeak's neutral settings, no renderer) per second of its audio.
  Paired and interleaved per utterance, best of ``PASSES`` each, on the 48 user turns of
  ``benchmarks/speed/speech.py``; the eSpeak and Praat renderers' cold cost likewise, for scale.
  The voice is loaded before timing (its one-time load is reported on its own).
* the constants ``neural.VOICE_MEDIAN_HZ`` (the voice's median F0 over these turns, Piper at
  ``length_scale`` 1) and ``NeuralRenderer.LEVEL`` (neutral renders' speech level next to
  eSpeak's), so a reader can check them.

Writes benchmarks/out/neural_speed.json and prints the summary line.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import parselmouth
from rich.console import Console

from benchmarks.speed.speech import utterances
from hear_gym.speech import espeak, neural
from hear_gym.speech.renderers import NEUTRAL, RenderRequest, make_renderer

OUT = Path(__file__).resolve().parents[1] / "out"
PASSES = 3


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def per_audio_second(request: RenderRequest, renderers: dict) -> dict[str, float]:
    """Best-of-PASSES seconds of work per second of audio, each way, interleaved."""
    best = dict.fromkeys(["raw_espeak", *renderers], float("inf"))
    for _ in range(PASSES):
        t, raw = timed(lambda: espeak.synthesize(request.text, request.voice, "en", NEUTRAL))
        best["raw_espeak"] = min(best["raw_espeak"], t / (len(raw) / espeak.ESPEAK_RATE))
        for name, renderer in renderers.items():
            t, out = timed(lambda r=renderer: r.render(request))
            best[name] = min(best[name], t / (len(out.waveform) / out.sample_rate))
    return best


def level_db(waveform: np.ndarray) -> float:
    speech = waveform[np.abs(waveform) > 1e-3]
    return float(20 * np.log10(np.sqrt(np.mean(speech.astype(np.float64) ** 2))))


def main() -> dict:
    requests = utterances()
    load_s, _ = timed(neural.check_available)
    renderers = {name: make_renderer(name) for name in ("neural", "espeak", "praat")}
    rows = [per_audio_second(r, renderers) for r in requests]
    cost = {name: float(np.mean([row[name] for row in rows])) for name in rows[0]}
    f0 = []
    for request in requests:
        for phrase in neural.synthesize(request.text, 1.0):
            track = parselmouth.Sound(phrase, sampling_frequency=neural.NEURAL_RATE).to_pitch_ac(
                pitch_floor=60, pitch_ceiling=300
            )
            values = track.selected_array["frequency"]
            f0.extend(values[values > 0])
    neutral = [RenderRequest(r.text, "neutral", r.voice) for r in requests]
    levels = {
        name: np.mean([level_db(renderers[name].render(r).waveform) for r in neutral]) for name in renderers
    }
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "utterances": len(requests),
        "passes": PASSES,
        "voice_load_s": load_s,
        "seconds_per_audio_second": cost,
        "neural_over_raw_espeak": cost["neural"] / cost["raw_espeak"],
        "neural_realtime_factor": 1 / cost["neural"],
        "voice_median_f0_hz": float(np.median(f0)),
        "neutral_level_dbfs": {k: float(v) for k, v in levels.items()},
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "neural_speed.json").write_text(json.dumps(results, indent=2) + "\n")
    Console().print(results)
    print(
        f"cold neural render {cost['neural'] * 1e3:.1f} ms per second of audio "
        f"({results['neural_realtime_factor']:.0f}x real time), raw eSpeak {cost['raw_espeak'] * 1e3:.2f} ms: "
        f"neural / raw eSpeak = {results['neural_over_raw_espeak']:.0f}x "
        f"(eSpeak renderer {cost['espeak'] / cost['raw_espeak']:.2f}x, Praat renderer "
        f"{cost['praat'] / cost['raw_espeak']:.1f}x); {len(requests)} utterances, best of {PASSES}"
    )
    return results


if __name__ == "__main__":
    main()
