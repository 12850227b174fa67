"""Speech-layer speed, as ratios measured in one run (paired, interleaved, best of several passes).

* cold render / raw eSpeak synthesis of the same text with the same eSpeak settings (target
  <= 1.3x), in wall and in CPU time. The settings matter: a hesitant plan speaks at 135 words/min, so there is more audio
  to synthesize than at the default 175; the renderer's own extra work is the prosody plan,
  clause cutting and pauses, gain, and resampling 22.05 -> 16 kHz;
* cold / warm (in-memory cache hit) render (target >= 100x);
* Hear2Act step with an audio observation (A+T, warm cache) / step with a text observation
  (target <= 5x). Both envs are driven through gym.make with the same pre-drawn actions.
Also reports the Praat renderer's cold cost. Writes benchmarks/out/speed_speech.json.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401
from hear_gym.envs.hear2act.audio import voice_for
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.user.realizer import FRAMES
from hear_gym.speech import espeak
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import EspeakRenderer, PraatRenderer, RenderRequest

OUT = Path(__file__).resolve().parents[1] / "out"
PASSES = 9


def utterances() -> list[RenderRequest]:
    """Realistic user turns: requests and filled reaction frames, in varied voices and labels."""
    labels = ["satisfied", "hesitant", "concerned", "frustrated", "lukewarm", "neutral"]
    requests = []
    for i, scenario in enumerate(scenarios_for("dev")[:24]):
        frame = [f for fs in FRAMES.values() for f in fs][i % 40]
        text = frame.format(
            budget=scenario.budget.phrase(),
            requirement=scenario.concerns[0].requirement,
            direction="something a bit more flexible",
            label="price",
            Label="Price",
        )
        requests.append(RenderRequest(text, labels[i % len(labels)], voice_for(scenario.scenario_id)))
        requests.append(RenderRequest(scenario.request, "neutral", voice_for(scenario.scenario_id)))
    return requests


def best_of(passes: int, fn) -> float:
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def render_ratios() -> dict:
    reqs = utterances()
    renderer = EspeakRenderer()
    raw = [(r.text, r.voice, renderer.settings(r.plan())) for r in reqs]
    # Paired and interleaved per utterance (best of PASSES each), so the noisy drift of a shared
    # machine hits both sides alike. Wall and CPU time (this process's): on a loaded machine the
    # wall clock also counts waiting for a core, which CPU time leaves out.
    totals = {"raw": [0.0, 0.0], "cold": [0.0, 0.0]}
    for (text, voice, settings), request in zip(raw, reqs, strict=True):
        sides = {
            "raw": lambda t=text, v=voice, s=settings: espeak.synthesize(t, v, "en", s),
            "cold": lambda r=request: renderer.render(r),
        }
        best = {side: [float("inf"), float("inf")] for side in sides}
        for _ in range(PASSES):
            for side, fn in sides.items():
                wall, cpu = time.perf_counter(), time.process_time()
                fn()
                best[side][0] = min(best[side][0], time.perf_counter() - wall)
                best[side][1] = min(best[side][1], time.process_time() - cpu)
        for side in sides:
            totals[side][0] += best[side][0]
            totals[side][1] += best[side][1]
    (raw_t, raw_cpu), (cold_t, cold_cpu) = totals["raw"], totals["cold"]
    cache = RenderCache(renderer)
    for r in reqs:
        cache.render(r)
    warm_t = best_of(PASSES, lambda: [cache.render(r) for r in reqs])
    praat_t = best_of(1, lambda: [PraatRenderer().render(r) for r in reqs[:12]]) / 12
    n = len(reqs)
    return {
        "utterances": n,
        "raw_ms": raw_t / n * 1e3,
        "cold_ms": cold_t / n * 1e3,
        "warm_ms": warm_t / n * 1e3,
        "praat_cold_ms": praat_t * 1e3,
        "cold_over_raw": cold_t / raw_t,
        "cold_over_raw_cpu": cold_cpu / raw_cpu,
        "cold_over_warm": cold_t / warm_t,
        "load_average": os.getloadavg()[0],
    }


def step_ratio(steps: int = 800) -> dict:
    actions = np.random.default_rng(0).integers(0, 22, steps)
    envs = {
        "text": gym.make("hear_gym/Hear2Act-v0", split="dev", access="T"),
        "audio": gym.make("hear_gym/Hear2Act-v0", split="dev", access="A+T"),
    }

    def run(env):
        env.reset(seed=0)
        for a in actions:
            _, _, terminated, truncated, _ = env.step(int(a))
            if terminated or truncated:
                env.reset()

    run(envs["audio"])  # warms the audio env's render cache with exactly these episodes
    best = {name: float("inf") for name in envs}
    for _ in range(PASSES):
        for name, env in envs.items():
            start = time.perf_counter()
            run(env)
            best[name] = min(best[name], time.perf_counter() - start)
    return {
        "text_step_us": best["text"] / steps * 1e6,
        "audio_step_us": best["audio"] / steps * 1e6,
        "audio_over_text": best["audio"] / best["text"],
    }


def main() -> dict:
    results = {**render_ratios(), **step_ratio()}
    table = Table(title="Speech speed (one run, best of interleaved passes)")
    for col in ("measure", "value", "target"):
        table.add_column(col)
    table.add_row("raw eSpeak synthesis", f"{results['raw_ms']:.2f} ms / utterance", "")
    table.add_row("cold render (eSpeak renderer)", f"{results['cold_ms']:.2f} ms", "")
    table.add_row("cold render / raw synthesis", f"{results['cold_over_raw']:.2f}x", "<= 1.3x")
    table.add_row("the same in CPU time", f"{results['cold_over_raw_cpu']:.2f}x", "<= 1.3x")
    table.add_row("warm render (memory cache)", f"{results['warm_ms'] * 1e3:.1f} us", "")
    table.add_row("cold / warm", f"{results['cold_over_warm']:.0f}x", ">= 100x")
    table.add_row("cold render (Praat renderer)", f"{results['praat_cold_ms']:.1f} ms", "")
    table.add_row("text-observation step", f"{results['text_step_us']:.1f} us", "")
    table.add_row("audio-observation step (A+T, warm)", f"{results['audio_step_us']:.1f} us", "")
    table.add_row("audio step / text step", f"{results['audio_over_text']:.2f}x", "<= 5x")
    table.add_row(
        "load average (1 min, at the end of the render passes)", f"{results['load_average']:.1f}", ""
    )
    Console().print(table)
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_speech.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
